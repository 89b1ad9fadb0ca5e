// The cold segment decoder (coldstore/segment/segment.h) on bytes a
// damaged or foreign object may hold. Decoding answers kDataLoss or a
// segment, never more; a decoded segment holds its header's count of
// consecutive entries, each passing its own checksum, within its time
// range.
//
// So that the fuzzer reaches past the checksums, the input also builds a
// valid segment (its bytes cut into entries); then one byte of it, chosen
// by the input, is changed: that segment must decode to exactly what was
// written, and the changed one must fail with kDataLoss.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/coldstore/segment/segment.h"
#include "keel/drivers/durable/crc32c.h"

namespace keel::fuzz {
namespace {

void Require(bool condition) {
  if (!condition) std::abort();
}

void CheckDecoded(absl::string_view bytes, absl::string_view name) {
  absl::StatusOr<DecodedSegment> decoded = DecodeSegment(bytes, name);
  if (!decoded.ok()) {
    Require(decoded.status().code() == absl::StatusCode::kDataLoss);
    return;
  }
  const SegmentHeader& header = decoded->header;
  Require(decoded->entries.size() == header.count);
  for (size_t i = 0; i < decoded->entries.size(); ++i) {
    const SegmentEntry& entry = decoded->entries[i];
    Require(entry.sequence == header.first + i);
    Require(EntryValueChecks(header.entry_check, entry.value));
    Require(entry.time >= header.min_time && entry.time <= header.max_time);
  }
}

std::string Sealed(absl::string_view envelope) {
  const uint32_t check = durable::Crc32c(envelope);
  std::string value;
  for (int shift = 24; shift >= 0; shift -= 8) value.push_back(static_cast<char>(check >> shift));
  value.append(envelope.data(), envelope.size());
  return value;
}

void CheckBuilt(absl::string_view input) {
  if (input.size() < 4) return;
  const uint32_t per_block = 1 + static_cast<uint8_t>(input[0]) % 8;
  const size_t flip_at = static_cast<uint8_t>(input[1]) | (static_cast<uint8_t>(input[2]) << 8);
  const uint8_t flip_mask = static_cast<uint8_t>(input[3]) | 1;
  absl::string_view rest = input.substr(4);
  SegmentWriter writer("fuzz.stream", 3, EntryCheck::kCrc32c, per_block);
  uint64_t sequence = 1 + (rest.empty() ? 0 : static_cast<uint8_t>(rest[0]));
  // Entries of 0..15 bytes of the input each.
  while (!rest.empty()) {
    const size_t size = std::min<size_t>(rest.size(), static_cast<uint8_t>(rest[0]) % 16);
    absl::string_view envelope = rest.substr(0, size);
    rest.remove_prefix(std::max<size_t>(size, 1));
    const absl::Time time = absl::FromUnixNanos(static_cast<int64_t>(sequence * 997 % 5000));
    Require(writer.Add(sequence, time, Sealed(envelope)).ok());
    ++sequence;
  }
  if (writer.entries() == 0) return;
  absl::StatusOr<EncodedSegment> segment = writer.Finish();
  Require(segment.ok());
  absl::StatusOr<DecodedSegment> decoded = DecodeSegment(segment->bytes, segment->object_name);
  Require(decoded.ok());
  Require(decoded->header == segment->header);
  Require(decoded->entries.size() == writer.entries());

  std::string changed = segment->bytes;
  changed[flip_at % changed.size()] ^= static_cast<char>(flip_mask);
  absl::StatusOr<DecodedSegment> corrupt = DecodeSegment(changed, segment->object_name);
  Require(!corrupt.ok() && corrupt.status().code() == absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace keel::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  keel::fuzz::CheckDecoded(input, "");
  keel::fuzz::CheckDecoded(
      input, "stream=fuzz.stream/00000000000000000001-00000000000000000009-00000000.seg");
  keel::fuzz::CheckBuilt(input);
  return 0;
}
