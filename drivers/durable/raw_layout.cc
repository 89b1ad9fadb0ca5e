#include "keel/drivers/durable/raw_layout.h"

#include "keel/drivers/durable/durable_bus.h"
#include "keel/drivers/durable/head_checkpoints.h"
#include "keel/drivers/durable/key_layout.h"

namespace keel::durable::raw {

std::string EntryKey(absl::string_view stream, uint64_t sequence) {
  return durable::EntryKey(stream, sequence);
}

std::string EntryValue(const Event& event) { return EncodeEntry(event, kCurrentStoreFormat); }

std::string EntryKeyPrefix() {
  // An entry key is the prefix, the stream's name, 0x00 and the sequence:
  // the range of the empty name's entries starts with the prefix and 0x00.
  const std::string start = EntryRange("").start;
  return start.substr(0, start.size() - 1);
}

std::string HeadKey(absl::string_view stream) { return durable::HeadKey(stream); }

std::string HeadValue(const RawHead& head) {
  return EncodeHead(Head{head.first, head.next, head.bytes, head.oldest_time});
}

HeadCheckpointRule::HeadCheckpointRule()
    : checkpoints_(std::make_unique<HeadCheckpoints>(DurableOptions().head_checkpoint_bytes)) {}

HeadCheckpointRule::~HeadCheckpointRule() = default;

bool HeadCheckpointRule::Due(uint64_t batch_bytes) const { return checkpoints_->Due(batch_bytes); }

bool HeadCheckpointRule::Lagging(absl::string_view stream) const {
  return checkpoints_->lagging().contains(stream);
}

void HeadCheckpointRule::Committed(bool checkpoint, absl::Span<const absl::string_view> unwritten,
                                   uint64_t batch_bytes) {
  checkpoints_->Committed(checkpoint, unwritten, batch_bytes);
}

}  // namespace keel::durable::raw
