// The durable driver's stored records as a damaged or foreign store may
// hold them: an event envelope (keel.v1.Event), an entry value (checksum +
// envelope) of either store format, and the head, meta, open-marker and
// epoch-start records and keys. Decoding answers an error or a value, never
// more; an envelope that decodes encodes to bytes that decode to the same
// event; and whatever protobuf's own parser accepts as a keel.v1.Event, the
// driver's reader accepts as the same event (core/event_codec.h).
//
// The input is used as it is and, so that the fuzzer gets past the
// checksums, also sealed with each format's check.
#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/strings/string_view.h"
#include "keel/core/event_codec.h"
#include "keel/core/fnv.h"
#include "keel/core/proto/event.pb.h"
#include "keel/drivers/durable/crc32c.h"
#include "keel/drivers/durable/key_layout.h"

namespace keel::fuzz {
namespace {

using durable::StoreFormat;

std::string BigEndian32(uint32_t value) {
  std::string out;
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(value >> shift));
  return out;
}

void CheckEnvelope(absl::string_view bytes) {
  absl::StatusOr<Event> event = DecodeEvent(bytes);
  keel::v1::Event message;
  const bool protobuf_accepts =
      message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  if (!event.ok()) {
    if (protobuf_accepts) std::abort();  // The reader refuses what protobuf reads.
    return;
  }
  absl::StatusOr<Event> again = DecodeEvent(EncodeEvent(*event));
  if (!again.ok() || *again != *event) std::abort();
  if (protobuf_accepts) {
    absl::StatusOr<Event> from_protobuf = DecodeEvent(message.SerializeAsString());
    if (!from_protobuf.ok() || *from_protobuf != *event) std::abort();
  }
}

void CheckEntry(absl::string_view value, StoreFormat format) {
  absl::StatusOr<Event> entry = durable::DecodeEntry("fuzz", 7, value, format);
  if (!entry.ok()) return;
  if (entry->stream != "fuzz" || entry->sequence != 7) std::abort();
  absl::StatusOr<Event> again =
      durable::DecodeEntry("fuzz", 7, durable::EncodeEntry(*entry, format), format);
  if (!again.ok() || *again != *entry) std::abort();
}

void CheckRecords(absl::string_view value) {
  if (absl::StatusOr<durable::Head> head = durable::DecodeHead(value); head.ok()) {
    if (durable::DecodeHead(durable::EncodeHead(*head)).value() != *head) std::abort();
  }
  if (absl::StatusOr<durable::StoreMeta> meta = durable::DecodeMeta(value); meta.ok()) {
    if (durable::DecodeMeta(durable::EncodeMeta(*meta)).value() != *meta) std::abort();
  }
  (void)durable::DecodeOpenMarker(value);
  (void)durable::DecodeEpochStart(value);
}

void CheckKey(absl::string_view key) {
  (void)durable::EntrySequence(key);
  (void)durable::ParseEpochStartKey(key);
  (void)durable::PrintableKey(key);
}

}  // namespace
}  // namespace keel::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);  // Its complaints about the inputs are not findings.
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace keel;
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  fuzz::CheckEnvelope(bytes);
  for (durable::StoreFormat format :
       {durable::StoreFormat::kFnv1a, durable::StoreFormat::kCrc32c}) {
    fuzz::CheckEntry(bytes, format);
    const uint32_t check =
        format == durable::StoreFormat::kCrc32c ? durable::Crc32c(bytes) : Fnv1a32(bytes);
    fuzz::CheckEntry(fuzz::BigEndian32(check) + std::string(bytes), format);
  }
  fuzz::CheckRecords(bytes);
  fuzz::CheckRecords(std::string(bytes) + fuzz::BigEndian32(Fnv1a32(bytes)));
  fuzz::CheckKey(bytes);
  return 0;
}
