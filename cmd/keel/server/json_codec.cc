#include "cmd/keel/server/json_codec.h"

#include <boost/json.hpp>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "core/status_macros.h"

namespace keel::server {
namespace json = boost::json;
namespace {

void AppendField(std::string& out, absl::string_view name, absl::string_view json_value) {
  absl::StrAppend(&out, "\"", name, "\":", json_value);
}

}  // namespace

std::string JsonString(absl::string_view text) {
  return json::serialize(json::string_view(text.data(), text.size()));
}

std::string FormatRfc3339(absl::Time time) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E9SZ", time, absl::UTCTimeZone());
}

void AppendEventJson(const Event& event, uint64_t epoch, std::string& out) {
  out.push_back('{');
  AppendField(out, "stream", JsonString(event.stream));
  out.push_back(',');
  AppendField(out, "sequence", absl::StrCat(event.sequence));
  out.push_back(',');
  AppendField(out, "cursor",
              absl::StrCat("\"", Cursor::For(event.stream, epoch, event.sequence).Encode(), "\""));
  out.push_back(',');
  AppendField(out, "id", JsonString(event.id));
  out.push_back(',');
  AppendField(out, "type", JsonString(event.type));
  out.push_back(',');
  AppendField(out, "time", absl::StrCat("\"", FormatRfc3339(event.time), "\""));
  if (!event.tenant.empty()) {
    out.push_back(',');
    AppendField(out, "tenant", JsonString(event.tenant));
  }
  out.push_back(',');
  if (event.content_type == kJsonContentType) {
    AppendField(out, "data", event.payload.empty() ? "null" : event.payload);
  } else {
    AppendField(out, "dataBase64", absl::StrCat("\"", absl::Base64Escape(event.payload), "\""));
    out.push_back(',');
    AppendField(out, "contentType", JsonString(event.content_type));
  }
  if (!event.attributes.empty()) {
    json::object attributes;
    for (const auto& [key, value] : event.attributes) attributes[key] = value;
    out.push_back(',');
    AppendField(out, "attributes", json::serialize(attributes));
  }
  out.push_back('}');
}

std::string ReceiptJson(const Receipt& receipt) {
  return absl::StrCat("{\"stream\":", JsonString(receipt.stream),
                      ",\"sequence\":", receipt.sequence, ",\"cursor\":\"",
                      receipt.cursor.Encode(), "\",\"id\":", JsonString(receipt.id),
                      ",\"duplicate\":", receipt.duplicate ? "true" : "false", "}");
}

std::string ReceiptsJson(absl::Span<const Receipt> receipts) {
  std::string out = "{\"receipts\":[";
  for (size_t i = 0; i < receipts.size(); ++i) {
    if (i > 0) out.push_back(',');
    out += ReceiptJson(receipts[i]);
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

std::string StreamInfoJson(const StreamInfo& info) {
  std::string out = absl::StrCat(
      "{\"stream\":", JsonString(info.stream), ",\"firstSequence\":", info.first_sequence,
      ",\"lastSequence\":", info.last_sequence, ",\"count\":", info.count,
      ",\"bytes\":", info.bytes, ",\"head\":\"", info.head.Encode(), "\"");
  if (info.count > 0) absl::StrAppend(&out, ",\"oldestTime\":\"", FormatRfc3339(info.oldest_time), "\"");
  out.push_back('}');
  return out;
}

std::string StreamListJson(const std::vector<StreamInfo>& infos) {
  std::string out = "{\"streams\":[";
  for (size_t i = 0; i < infos.size(); ++i) {
    if (i > 0) out.push_back(',');
    out += StreamInfoJson(infos[i]);
  }
  out += "]}";
  return out;
}

}  // namespace keel::server
