#include "cmd/keel/server/json_codec.h"

#include <boost/json.hpp>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "core/status_macros.h"

namespace keel::server {
namespace json = boost::json;
namespace {

absl::StatusOr<std::string> OptionalString(const json::object& object, absl::string_view key,
                                           absl::string_view where) {
  const json::value* value = object.if_contains(json::string_view(key.data(), key.size()));
  if (value == nullptr || value->is_null()) return std::string();
  if (!value->is_string()) return InvalidArgument(absl::StrCat(where, key, " must be a string"));
  return std::string(value->get_string());
}

absl::Status ParseAttributes(const json::object& object, absl::string_view where, Event& event) {
  const json::value* attributes = object.if_contains("attributes");
  if (attributes == nullptr || attributes->is_null()) return absl::OkStatus();
  if (!attributes->is_object()) {
    return InvalidArgument(absl::StrCat(where, "attributes must be an object of strings"));
  }
  for (const auto& [key, value] : attributes->get_object()) {
    if (!value.is_string()) {
      return InvalidArgument(absl::StrCat(where, "attribute '", std::string(key),
                                          "' must be a string"));
    }
    event.attributes.emplace(std::string(key), std::string(value.get_string()));
  }
  return absl::OkStatus();
}

// "data" (any JSON value, stored as JSON) or "dataBase64" + "contentType".
absl::Status ParseData(const json::object& object, absl::string_view where, Event& event) {
  const json::value* data = object.if_contains("data");
  const json::value* base64 = object.if_contains("dataBase64");
  if (data != nullptr && base64 != nullptr) {
    return InvalidArgument(absl::StrCat(where, "give either data or dataBase64, not both"));
  }
  if (base64 != nullptr) {
    if (!base64->is_string() ||
        !absl::Base64Unescape(std::string(base64->get_string()), &event.payload)) {
      return InvalidArgument(absl::StrCat(where, "dataBase64 must be a base64 string"));
    }
    KEEL_ASSIGN_OR_RETURN(event.content_type, OptionalString(object, "contentType", where));
    if (event.content_type.empty()) event.content_type = "application/octet-stream";
    return absl::OkStatus();
  }
  event.content_type = kJsonContentType;
  event.payload = data != nullptr ? json::serialize(*data) : "null";
  return absl::OkStatus();
}

absl::StatusOr<Event> ParseEvent(const json::value& value, size_t index, bool in_array) {
  const std::string where = in_array ? absl::StrCat("event ", index, ": ") : "";
  if (!value.is_object()) return InvalidArgument(absl::StrCat(where, "an event must be an object"));
  const json::object& object = value.get_object();
  for (const auto& [key, unused] : object) {
    static constexpr absl::string_view kKnown[] = {"type",     "data",       "dataBase64",
                                                   "contentType", "tenant",  "attributes",
                                                   "idempotencyKey", "id"};
    if (std::find(std::begin(kKnown), std::end(kKnown),
                  absl::string_view(key.data(), key.size())) == std::end(kKnown)) {
      return InvalidArgument(absl::StrCat(where, "unknown field '", std::string(key), "'"));
    }
  }
  Event event;
  KEEL_ASSIGN_OR_RETURN(event.type, OptionalString(object, "type", where));
  KEEL_ASSIGN_OR_RETURN(event.tenant, OptionalString(object, "tenant", where));
  KEEL_ASSIGN_OR_RETURN(event.id, OptionalString(object, "id", where));
  KEEL_ASSIGN_OR_RETURN(std::string key, OptionalString(object, "idempotencyKey", where));
  if (!key.empty()) event.idempotency_key = std::move(key);
  KEEL_RETURN_IF_ERROR(ParseAttributes(object, where, event));
  KEEL_RETURN_IF_ERROR(ParseData(object, where, event));
  return event;
}

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

absl::StatusOr<std::vector<Event>> ParsePublishBody(absl::string_view body,
                                                    absl::string_view header_idempotency_key,
                                                    bool* was_array) {
  boost::system::error_code error;
  json::value root = json::parse(json::string_view(body.data(), body.size()), error);
  if (error) return InvalidArgument(absl::StrCat("request body is not JSON: ", error.message()));
  std::vector<Event> events;
  *was_array = root.is_array();
  if (!root.is_array()) {
    KEEL_ASSIGN_OR_RETURN(Event event, ParseEvent(root, 0, false));
    if (!event.idempotency_key && !header_idempotency_key.empty()) {
      event.idempotency_key = std::string(header_idempotency_key);
    }
    events.push_back(std::move(event));
    return events;
  }
  if (!header_idempotency_key.empty()) {
    return InvalidArgument("the Idempotency-Key header applies to single events; "
                           "give each event of a batch its own idempotencyKey");
  }
  const json::array& array = root.get_array();
  events.reserve(array.size());
  for (size_t i = 0; i < array.size(); ++i) {
    KEEL_ASSIGN_OR_RETURN(Event event, ParseEvent(array[i], i, true));
    events.push_back(std::move(event));
  }
  return events;
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

std::string ReceiptsJson(const std::vector<Receipt>& receipts) {
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
