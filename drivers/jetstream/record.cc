#include "keel/drivers/jetstream/record.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "keel/core/event_codec.h"
#include "keel/core/status_macros.h"

namespace keel::jetstream {
namespace {

constexpr char kSeq[] = "Keel-Seq";
constexpr char kCount[] = "Keel-Count";
constexpr char kBytes[] = "Keel-Bytes";
constexpr char kFirst[] = "Keel-First";
constexpr char kFirstBytes[] = "Keel-First-Bytes";
constexpr char kFirstTime[] = "Keel-First-Time";
constexpr char kTime[] = "Keel-Time";
constexpr char kKeyed[] = "Keel-Keyed";
constexpr const char* kClaim = kClaimHeader;

absl::Status Malformed(absl::string_view where, absl::string_view why) {
  return absl::DataLossError(absl::StrCat("jetstream: ", where, " is not a Keel record: ", why));
}

absl::Status ReadUint(const NatsHeaders& headers, const char* name, bool required,
                      absl::string_view where, uint64_t& out) {
  const std::string* text = FindHeader(headers, name);
  if (text == nullptr) {
    return required ? Malformed(where, absl::StrCat("no ", name, " header")) : absl::OkStatus();
  }
  if (!absl::SimpleAtoi(*text, &out)) {
    return Malformed(where, absl::StrCat(name, " is '", *text, "'"));
  }
  return absl::OkStatus();
}

absl::Status ReadTime(const NatsHeaders& headers, const char* name, absl::string_view where,
                      absl::Time& out) {
  const std::string* text = FindHeader(headers, name);
  if (text == nullptr) return absl::OkStatus();
  int64_t nanos = 0;
  if (!absl::SimpleAtoi(*text, &nanos)) {
    return Malformed(where, absl::StrCat(name, " is '", *text, "'"));
  }
  out = absl::FromUnixNanos(nanos);
  return absl::OkStatus();
}

void PutUint32(uint32_t value, std::string& out) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

uint32_t GetUint32(absl::string_view bytes) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i)
    value |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
  return value;
}

}  // namespace

LogBounds RecordHeader::bounds() const {
  LogBounds bounds;
  bounds.first = first;
  bounds.next = next();
  bounds.bytes = total_bytes - first_bytes;
  if (bounds.count() > 0) bounds.oldest_time = first_time;
  return bounds;
}

absl::StatusOr<RecordHeader> ParseRecordHeader(const NatsHeaders& headers,
                                               absl::string_view where) {
  RecordHeader header;
  KEEL_RETURN_IF_ERROR(ReadUint(headers, kSeq, true, where, header.seq));
  KEEL_RETURN_IF_ERROR(ReadUint(headers, kCount, true, where, header.count));
  KEEL_RETURN_IF_ERROR(ReadUint(headers, kBytes, true, where, header.total_bytes));
  KEEL_RETURN_IF_ERROR(ReadUint(headers, kFirst, true, where, header.first));
  KEEL_RETURN_IF_ERROR(ReadUint(headers, kFirstBytes, true, where, header.first_bytes));
  KEEL_RETURN_IF_ERROR(ReadUint(headers, kKeyed, false, where, header.keyed));
  KEEL_RETURN_IF_ERROR(ReadTime(headers, kFirstTime, where, header.first_time));
  KEEL_RETURN_IF_ERROR(ReadTime(headers, kTime, where, header.last_time));
  if (const std::string* claim = FindHeader(headers, kClaim)) header.claim = *claim;
  if (header.seq == 0) return Malformed(where, "Keel-Seq is 0");
  if (header.first > header.next()) return Malformed(where, "Keel-First is past the record");
  if (header.first_bytes > header.total_bytes) return Malformed(where, "Keel-First-Bytes too big");
  return header;
}

void AppendRecordHeaders(const RecordHeader& header, NatsHeaders& headers) {
  headers.emplace_back(kSeq, absl::StrCat(header.seq));
  headers.emplace_back(kCount, absl::StrCat(header.count));
  headers.emplace_back(kBytes, absl::StrCat(header.total_bytes));
  headers.emplace_back(kFirst, absl::StrCat(header.first));
  headers.emplace_back(kFirstBytes, absl::StrCat(header.first_bytes));
  if (header.first_time != absl::InfinitePast()) {
    headers.emplace_back(kFirstTime, absl::StrCat(absl::ToUnixNanos(header.first_time)));
  }
  if (header.last_time != absl::InfinitePast()) {
    headers.emplace_back(kTime, absl::StrCat(absl::ToUnixNanos(header.last_time)));
  }
  if (header.keyed > 0) headers.emplace_back(kKeyed, absl::StrCat(header.keyed));
  if (!header.claim.empty()) headers.emplace_back(kClaim, header.claim);
}

RecordHeader AppendedHeader(const RecordHeader& previous, absl::Span<const Event> events) {
  RecordHeader header = previous;
  header.seq = previous.next();
  header.count = events.size();
  header.keyed = 0;
  header.claim.clear();
  // A stream whose every event was trimmed starts its retained range with
  // this record's first event.
  if (previous.first == previous.next() && !events.empty()) {
    header.first = header.seq;
    header.first_bytes = previous.total_bytes;
    header.first_time = events.front().time;
  }
  for (const Event& event : events) {
    header.total_bytes += event.ApproximateSize();
    if (event.idempotency_key) ++header.keyed;
  }
  if (!events.empty()) header.last_time = events.back().time;
  return header;
}

std::string EncodeRecordEvents(absl::Span<const Event> events) {
  std::string out;
  for (const Event& event : events) {
    const size_t at = out.size();
    PutUint32(0, out);
    AppendEncodedEventBody(event, out);
    const uint32_t length = static_cast<uint32_t>(out.size() - at - 4);
    for (int i = 0; i < 4; ++i) out[at + i] = static_cast<char>((length >> (8 * i)) & 0xFF);
  }
  return out;
}

absl::StatusOr<bool> DecodeRecordEvents(absl::string_view data, const RecordHeader& header,
                                        absl::string_view stream, uint64_t from, uint64_t to,
                                        const std::function<Event&()>& slot,
                                        const std::function<bool()>& take) {
  for (uint64_t i = 0; i < header.count; ++i) {
    const uint64_t sequence = header.seq + i;
    if (sequence > to) return true;
    if (data.size() < 4 || data.size() - 4 < GetUint32(data)) {
      return absl::DataLossError(absl::StrCat("jetstream: stream '", stream, "': the record of ",
                                              header.seq, " holds fewer than its ", header.count,
                                              " events"));
    }
    const uint32_t length = GetUint32(data);
    const absl::string_view body = data.substr(4, length);
    data.remove_prefix(4 + length);
    if (sequence < from) continue;
    Event& event = slot();
    absl::Status decoded = DecodeEventInto(body, event);
    if (!decoded.ok()) {
      return absl::DataLossError(absl::StrCat("jetstream: stream '", stream, "': event ", sequence,
                                              " does not decode: ", decoded.message()));
    }
    event.stream = std::string(stream);
    event.sequence = sequence;
    if (!take()) return false;
  }
  if (!data.empty()) {
    return absl::DataLossError(absl::StrCat("jetstream: stream '", stream, "': the record of ",
                                            header.seq, " holds more than its ", header.count,
                                            " events"));
  }
  return true;
}

}  // namespace keel::jetstream
