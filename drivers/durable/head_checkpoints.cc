#include "keel/drivers/durable/head_checkpoints.h"

namespace keel::durable {

void HeadCheckpoints::Committed(bool checkpoint, absl::Span<const absl::string_view> unwritten,
                                uint64_t batch_bytes) {
  if (checkpoint) {
    lagging_.clear();
    unrecorded_bytes_ = 0;
    return;
  }
  unrecorded_bytes_ += batch_bytes;
  for (absl::string_view stream : unwritten) {
    if (!lagging_.contains(stream)) lagging_.emplace(stream);
  }
}

}  // namespace keel::durable
