#include "keel/drivers/durable/cold_layout.h"

#include "absl/strings/str_cat.h"
#include "keel/core/fnv.h"
#include "keel/drivers/durable/key_layout.h"

namespace keel::durable {
namespace {

constexpr char kSegmentPrefix = 'C';
constexpr char kIntentPrefix = 'T';
constexpr char kRetiringPrefix = 'R';
constexpr char kSummaryPrefix = 'S';
constexpr uint8_t kVersion = 1;
constexpr size_t kSegmentFixedSize = 1 + 8 * 7 + 2 + 4;  // Without the name.
constexpr size_t kSummarySize = 1 + 8 * 5 + 4;

std::string NumberKey(char prefix, absl::string_view stream, uint64_t number) {
  std::string key;
  key.reserve(stream.size() + 10);
  key.push_back(prefix);
  key.append(stream.data(), stream.size());
  key.push_back('\0');
  AppendBigEndian64(key, number);
  return key;
}

void AppendU32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}

uint32_t ReadU32(absl::string_view in) {
  return (uint32_t{static_cast<uint8_t>(in[0])} << 24) |
         (uint32_t{static_cast<uint8_t>(in[1])} << 16) |
         (uint32_t{static_cast<uint8_t>(in[2])} << 8) | uint32_t{static_cast<uint8_t>(in[3])};
}

void AppendTime(std::string& out, absl::Time time) {
  AppendBigEndian64(out, static_cast<uint64_t>(absl::ToUnixNanos(time)));
}

absl::Time ReadTime(absl::string_view in) {
  return absl::FromUnixNanos(static_cast<int64_t>(DecodeBigEndian64(in)));
}

void Seal(std::string& record) { AppendU32(record, Fnv1a32(record)); }

absl::Status Unseal(absl::string_view key, absl::string_view value, size_t least) {
  if (value.size() < least) {
    return absl::DataLossError(absl::StrCat("key ", PrintableKey(key), ": cold record has ",
                                            value.size(), " bytes, at least ", least, " expected"));
  }
  if (static_cast<uint8_t>(value[0]) != kVersion) {
    return absl::DataLossError(absl::StrCat("key ", PrintableKey(key),
                                            ": cold record has unknown format version ",
                                            static_cast<uint8_t>(value[0])));
  }
  if (ReadU32(value.substr(value.size() - 4)) != Fnv1a32(value.substr(0, value.size() - 4))) {
    return absl::DataLossError(
        absl::StrCat("key ", PrintableKey(key), ": cold record fails its checksum"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string ColdSegmentKey(absl::string_view stream, uint64_t first) {
  return NumberKey(kSegmentPrefix, stream, first);
}

KeyRange ColdSegmentRange(absl::string_view stream) {
  return KeyRange::Prefix(
      absl::StrCat(std::string(1, kSegmentPrefix), stream, absl::string_view("\0", 1)));
}

std::string TierIntentKey(absl::string_view stream) {
  return absl::StrCat(std::string(1, kIntentPrefix), stream);
}

KeyRange TierIntentRange() { return KeyRange::Prefix(std::string(1, kIntentPrefix)); }

std::string RetiringSegmentKey(absl::string_view stream, uint64_t first) {
  return NumberKey(kRetiringPrefix, stream, first);
}

KeyRange RetiringSegmentRange() { return KeyRange::Prefix(std::string(1, kRetiringPrefix)); }

std::string ColdSummaryKey(absl::string_view stream) {
  return absl::StrCat(std::string(1, kSummaryPrefix), stream);
}

KeyRange ColdSummaryRange() { return KeyRange::Prefix(std::string(1, kSummaryPrefix)); }

absl::string_view StreamOfNameKey(absl::string_view key) { return key.substr(1); }

absl::StatusOr<absl::string_view> StreamOfNumberKey(absl::string_view key) {
  if (key.size() < 11 || key[key.size() - 9] != '\0') {
    return absl::DataLossError(absl::StrCat("malformed cold segment key ", PrintableKey(key)));
  }
  return key.substr(1, key.size() - 10);
}

std::string EncodeColdSegment(const ColdSegment& segment) {
  std::string out;
  out.reserve(kSegmentFixedSize + segment.object.size());
  out.push_back(static_cast<char>(kVersion));
  AppendBigEndian64(out, segment.first);
  AppendBigEndian64(out, segment.last);
  AppendBigEndian64(out, segment.epoch);
  AppendBigEndian64(out, segment.object_bytes);
  AppendBigEndian64(out, segment.event_bytes);
  AppendTime(out, segment.min_time);
  AppendTime(out, segment.max_time);
  out.push_back(static_cast<char>(segment.object.size() >> 8));
  out.push_back(static_cast<char>(segment.object.size() & 0xff));
  out.append(segment.object);
  Seal(out);
  return out;
}

absl::StatusOr<ColdSegment> DecodeColdSegment(absl::string_view key, absl::string_view value) {
  if (absl::Status sealed = Unseal(key, value, kSegmentFixedSize); !sealed.ok()) return sealed;
  ColdSegment segment;
  absl::string_view in = value.substr(1);
  segment.first = DecodeBigEndian64(in.substr(0));
  segment.last = DecodeBigEndian64(in.substr(8));
  segment.epoch = DecodeBigEndian64(in.substr(16));
  segment.object_bytes = DecodeBigEndian64(in.substr(24));
  segment.event_bytes = DecodeBigEndian64(in.substr(32));
  segment.min_time = ReadTime(in.substr(40));
  segment.max_time = ReadTime(in.substr(48));
  const size_t name_size =
      (size_t{static_cast<uint8_t>(in[56])} << 8) | size_t{static_cast<uint8_t>(in[57])};
  if (value.size() != kSegmentFixedSize + name_size || segment.last < segment.first) {
    return absl::DataLossError(
        absl::StrCat("key ", PrintableKey(key), ": cold segment record is inconsistent"));
  }
  segment.object = std::string(in.substr(58, name_size));
  return segment;
}

std::string EncodeColdSummary(const ColdSummary& summary) {
  std::string out;
  out.reserve(kSummarySize);
  out.push_back(static_cast<char>(kVersion));
  AppendBigEndian64(out, summary.first);
  AppendBigEndian64(out, summary.segments);
  AppendBigEndian64(out, summary.object_bytes);
  AppendBigEndian64(out, summary.event_bytes);
  AppendTime(out, summary.oldest_time);
  Seal(out);
  return out;
}

absl::StatusOr<ColdSummary> DecodeColdSummary(absl::string_view key, absl::string_view value) {
  if (absl::Status sealed = Unseal(key, value, kSummarySize); !sealed.ok()) return sealed;
  if (value.size() != kSummarySize) {
    return absl::DataLossError(
        absl::StrCat("key ", PrintableKey(key), ": cold summary has ", value.size(), " bytes"));
  }
  absl::string_view in = value.substr(1);
  ColdSummary summary;
  summary.first = DecodeBigEndian64(in.substr(0));
  summary.segments = DecodeBigEndian64(in.substr(8));
  summary.object_bytes = DecodeBigEndian64(in.substr(16));
  summary.event_bytes = DecodeBigEndian64(in.substr(24));
  summary.oldest_time = ReadTime(in.substr(32));
  return summary;
}

}  // namespace keel::durable
