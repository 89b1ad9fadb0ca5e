#include "keel/cmd/keel/server/json_codec.h"

#include <algorithm>

#include <boost/json.hpp>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/append_decimal.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::server {
namespace json = boost::json;
namespace {

// Characters JSON strings carry as they are: printable ASCII but the quote
// and the backslash. Anything else goes through Boost.JSON's serializer.
bool NeedsNoEscape(absl::string_view text) {
  for (char c : text) {
    if (!kPlainJsonChars[static_cast<unsigned char>(c)]) return false;
  }
  return true;
}

// The length of the well-formed UTF-8 sequence (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF) at the start of `text`, 0
// when there is none.
size_t Utf8SequenceAt(absl::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  size_t size = 0;
  unsigned char low = 0x80, high = 0xbf;  // The second byte's range.
  if (lead >= 0xc2 && lead <= 0xdf) {
    size = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    size = 3;
    if (lead == 0xe0) low = 0xa0;   // Overlong.
    if (lead == 0xed) high = 0x9f;  // Surrogates.
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    size = 4;
    if (lead == 0xf0) low = 0x90;   // Overlong.
    if (lead == 0xf4) high = 0x8f;  // Above U+10FFFF.
  } else {
    return 0;
  }
  if (text.size() < size || byte(1) < low || byte(1) > high) return 0;
  for (size_t i = 2; i < size; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xbf) return 0;
  }
  return size;
}

// `text` with every byte that does not begin a well-formed UTF-8 sequence
// replaced by U+FFFD, as JSON text must be UTF-8 (RFC 8259): messages quote
// what clients sent (a cursor, a query value), and events written through
// the library may carry any bytes. Returns false, leaving `valid` alone,
// when `text` is already well-formed.
bool ReplaceInvalidUtf8(absl::string_view text, std::string& valid) {
  size_t at = 0;
  while (at < text.size() && Utf8SequenceAt(text.substr(at)) > 0) {
    at += Utf8SequenceAt(text.substr(at));
  }
  if (at == text.size()) return false;
  valid.assign(text.data(), at);
  while (at < text.size()) {
    const size_t size = Utf8SequenceAt(text.substr(at));
    if (size == 0) {
      valid += "\xEF\xBF\xBD";
      ++at;
    } else {
      valid.append(text.data() + at, size);
      at += size;
    }
  }
  return true;
}

// Appends `value` (< 10^digits) as exactly `digits` digits ending at `end`.
void PutDigits(char* end, uint64_t value, int digits) {
  for (int i = 0; i < digits; ++i, value /= 10) *--end = static_cast<char>('0' + value % 10);
}

// The civil date of `days` since 1970-01-01 in the proleptic Gregorian
// calendar, counted in 400-year eras that start on March 1st so that the
// leap day is the last day of a year.
void CivilFromDays(int64_t days, int64_t& year, unsigned& month, unsigned& day) {
  days += 719468;  // Days from 0000-03-01 to 1970-01-01.
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const auto day_of_era = static_cast<unsigned>(days - era * 146097);
  const unsigned year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  const unsigned day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const unsigned shifted_month = (5 * day_of_year + 2) / 153;  // March = 0.
  day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
  month = shifted_month < 10 ? shifted_month + 3 : shifted_month - 9;
  year = static_cast<int64_t>(year_of_era) + era * 400 + (month <= 2 ? 1 : 0);
}

// `{"stream":…,"sequence":…,"cursor":"…","id":…`: how an event and a receipt
// both begin.
void AppendIdentity(absl::string_view stream, uint64_t sequence, absl::string_view cursor,
                    absl::string_view id, std::string& out) {
  out += "{\"stream\":";
  AppendJsonString(stream, out);
  out += ",\"sequence\":";
  AppendDecimal(sequence, out);
  out += ",\"cursor\":\"";
  out.append(cursor.data(), cursor.size());
  out += "\",\"id\":";
  AppendJsonString(id, out);
}

}  // namespace

std::string JsonString(absl::string_view text) {
  std::string out;
  AppendJsonString(text, out);
  return out;
}

void AppendJsonString(absl::string_view text, std::string& out) {
  if (!NeedsNoEscape(text)) {
    std::string valid;
    if (ReplaceInvalidUtf8(text, valid)) text = valid;
    out += json::serialize(json::string_view(text.data(), text.size()));
    return;
  }
  out.push_back('"');
  out.append(text.data(), text.size());
  out.push_back('"');
}

std::string FormatRfc3339(absl::Time time) {
  std::string out;
  AppendRfc3339(time, out);
  return out;
}

// By hand for 1970 to 9999 (every event time): absl::FormatTime parses its
// format on every call, and a catching-up SSE reader formats one time per
// event. Other times take the general path.
void AppendRfc3339(absl::Time time, std::string& out) {
  constexpr int64_t kYear10000 = 253402300800;  // 10000-01-01T00:00:00Z.
  const int64_t seconds = absl::ToUnixSeconds(time);
  if (time < absl::UnixEpoch() || seconds >= kYear10000) {
    out += absl::FormatTime("%Y-%m-%dT%H:%M:%E9SZ", time, absl::UTCTimeZone());
    return;
  }
  const int64_t nanos = absl::ToInt64Nanoseconds(time - absl::FromUnixSeconds(seconds));
  int64_t year = 0;
  unsigned month = 0;
  unsigned day = 0;
  CivilFromDays(seconds / 86400, year, month, day);
  const int64_t second_of_day = seconds % 86400;
  char text[] = "YYYY-MM-DDTHH:MM:SS.NNNNNNNNNZ";
  PutDigits(text + 4, static_cast<uint64_t>(year), 4);
  PutDigits(text + 7, month, 2);
  PutDigits(text + 10, day, 2);
  PutDigits(text + 13, static_cast<uint64_t>(second_of_day / 3600), 2);
  PutDigits(text + 16, static_cast<uint64_t>(second_of_day / 60 % 60), 2);
  PutDigits(text + 19, static_cast<uint64_t>(second_of_day % 60), 2);
  PutDigits(text + 29, static_cast<uint64_t>(nanos), 9);
  out.append(text, sizeof(text) - 1);
}

void AppendEventJson(const Event& event, uint64_t epoch, std::string& out) {
  const Cursor::Token cursor = Cursor::For(event.stream, epoch, event.sequence).EncodeToken();
  AppendEventJson(event, cursor.view(), out);
}

// Appended piece by piece: this runs once per event of every SSE frame and
// replay page, where temporary strings per field showed in profiles.
void AppendEventJson(const Event& event, absl::string_view cursor, std::string& out) {
  AppendIdentity(event.stream, event.sequence, cursor, event.id, out);
  out += ",\"type\":";
  AppendJsonString(event.type, out);
  out += ",\"time\":\"";
  AppendRfc3339(event.time, out);
  out += '"';
  if (!event.tenant.empty()) {
    out += ",\"tenant\":";
    AppendJsonString(event.tenant, out);
  }
  if (event.content_type == kJsonContentType) {
    out += ",\"data\":";
    if (event.payload.empty()) {
      out += "null";
    } else {
      out += event.payload;
    }
  } else {
    absl::StrAppend(&out, ",\"dataBase64\":\"", absl::Base64Escape(event.payload),
                    "\",\"contentType\":");
    AppendJsonString(event.content_type, out);
  }
  if (!event.attributes.empty()) {
    out += ",\"attributes\":{";
    for (const auto& [key, value] : event.attributes) {
      if (out.back() != '{') out.push_back(',');
      AppendJsonString(key, out);
      out.push_back(':');
      AppendJsonString(value, out);
    }
    out.push_back('}');
  }
  out.push_back('}');
}

// Written in place (the cursor token by value, strings quoted into `out`): a
// batch's response is one receipt per event.
void AppendReceiptJson(const Receipt& receipt, std::string& out) {
  AppendIdentity(receipt.stream, receipt.sequence, receipt.cursor.EncodeToken().view(), receipt.id,
                 out);
  out += receipt.duplicate ? ",\"duplicate\":true}" : ",\"duplicate\":false}";
}

// About what one receipt takes with a short stream name: growing the
// string to it reallocated three or four times.
constexpr size_t kReceiptBytes = 160;

std::string ReceiptJson(const Receipt& receipt) {
  std::string out;
  out.reserve(kReceiptBytes + receipt.stream.size());
  AppendReceiptJson(receipt, out);
  return out;
}

std::string ReceiptsJson(absl::Span<const Receipt> receipts) {
  std::string out;
  const size_t stream_bytes = receipts.empty() ? 0 : receipts.front().stream.size();
  out.reserve(16 + receipts.size() * (kReceiptBytes + stream_bytes));
  out += "{\"receipts\":[";
  for (size_t i = 0; i < receipts.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendReceiptJson(receipts[i], out);
  }
  out += "]}";
  return out;
}

std::string PageJson(const ReplayPage& page, absl::string_view stream, uint64_t epoch) {
  std::string out = "{\"events\":[";
  for (size_t i = 0; i < page.events.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendEventJson(page.events[i], epoch, out);
  }
  absl::StrAppend(&out, "],\"next\":\"", page.next.Encode(), "\",\"head\":\"",
                  Cursor::For(stream, epoch, page.head_sequence).Encode(),
                  "\",\"headSequence\":", page.head_sequence,
                  ",\"reachedEnd\":", page.reached_end ? "true" : "false", "}");
  return out;
}

std::string StreamInfoJson(const StreamInfo& info, const StreamTiers* tiers) {
  std::string out = absl::StrCat(
      "{\"stream\":", JsonString(info.stream), ",\"firstSequence\":", info.first_sequence,
      ",\"lastSequence\":", info.last_sequence, ",\"count\":", info.count,
      ",\"bytes\":", info.bytes, ",\"head\":\"", info.head.Encode(), "\"");
  if (info.count > 0) absl::StrAppend(&out, ",\"oldestTime\":\"", FormatRfc3339(info.oldest_time), "\"");
  if (tiers != nullptr) {
    // The bounds and the tiers are read one after the other: a tiering or a
    // publish in between must not make a count wrap.
    const uint64_t next = info.last_sequence + 1;
    const uint64_t hot_first = std::min(tiers->hot_first_sequence, next);
    absl::StrAppend(&out, ",\"hot\":{\"firstSequence\":", hot_first,
                    ",\"count\":", next - hot_first, "}");
    if (tiers->has_cold()) {
      const uint64_t cold_first = std::min(tiers->cold_first_sequence, hot_first);
      absl::StrAppend(&out, ",\"cold\":{\"firstSequence\":", cold_first,
                      ",\"count\":", hot_first - cold_first, ",\"segments\":", tiers->cold_segments,
                      ",\"bytes\":", tiers->cold_bytes, "}");
    }
  }
  out.push_back('}');
  return out;
}

std::string StreamListJson(const std::vector<StreamInfo>& infos,
                           const std::vector<StreamTiers>& tiers) {
  std::string out = "{\"streams\":[";
  for (size_t i = 0; i < infos.size(); ++i) {
    if (i > 0) out.push_back(',');
    out += StreamInfoJson(infos[i], tiers.empty() ? nullptr : &tiers[i]);
  }
  out += "]}";
  return out;
}

}  // namespace keel::server
