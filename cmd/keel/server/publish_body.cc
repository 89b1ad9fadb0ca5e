#include "keel/cmd/keel/server/publish_body.h"

#include <array>

#include <boost/json.hpp>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/client/raw_json.h"
#include "keel/cmd/keel/server/event_fields.h"
#include "keel/cmd/keel/server/json_codec.h"
#include "keel/cmd/keel/server/plain_event.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::server {
namespace json = boost::json;
namespace {

// The members of an event object, found in one pass over it (a lookup per
// field searched the object ten times per event). Each is null when absent;
// a JSON null is present here, and each field says what it makes of it.
class EventMembers {
 public:
  const json::value* operator[](EventField field) const {
    return values_[static_cast<size_t>(field)];
  }
  void Set(EventField field, const json::value& value) {
    values_[static_cast<size_t>(field)] = &value;
  }

 private:
  std::array<const json::value*, kEventFieldCount> values_{};
};

// The members of `object` by name; kInvalidArgument names the first
// unknown one.
absl::StatusOr<EventMembers> FindMembers(const json::object& object, absl::string_view where) {
  EventMembers members;
  for (const auto& [key, value] : object) {
    const absl::string_view name(key.data(), key.size());
    const std::optional<EventField> field = EventFieldNamed(name);
    if (!field) return InvalidArgument(absl::StrCat(where, "unknown field '", name, "'"));
    members.Set(*field, value);
  }
  return members;
}

// An optional string field; "" when absent or null.
absl::StatusOr<std::string> OptionalString(const EventMembers& members, EventField field,
                                           absl::string_view where) {
  const json::value* value = members[field];
  if (value == nullptr || value->is_null()) return std::string();
  if (!value->is_string()) {
    return InvalidArgument(absl::StrCat(where, EventFieldName(field), " must be a string"));
  }
  return std::string(value->get_string());
}

absl::Status ParseAttributes(const json::value* attributes, absl::string_view where,
                             Event& event) {
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

// The data as the client wrote it, compacted, so that numbers keep their
// spelling (1.50 stays 1.50, big integers stay exact) where a DOM round
// trip would rewrite them. Falls back to serialising the parsed value when
// the raw member cannot be matched to it for sure (an escaped or repeated
// name); otherwise the raw text is what the parser read, so it is not
// parsed again.
std::string DataText(const json::value& data, absl::string_view raw_event) {
  if (std::optional<absl::string_view> raw = client::RawUniqueMember(raw_event, "data")) {
    return client::RawCompact(*raw);
  }
  return json::serialize(data);
}

// "data" (any JSON value, stored as JSON) or "dataBase64" + "contentType".
// `raw_event` is the event's own text (empty when unknown).
absl::Status ParseData(const EventMembers& members, absl::string_view raw_event,
                       absl::string_view where, Event& event) {
  if (members[EventField::kData] != nullptr && members[EventField::kDataBase64] != nullptr) {
    return InvalidArgument(absl::StrCat(where, "give either data or dataBase64, not both"));
  }
  if (const json::value* base64 = members[EventField::kDataBase64]) {
    if (!base64->is_string() ||
        !absl::Base64Unescape(std::string(base64->get_string()), &event.payload)) {
      return InvalidArgument(absl::StrCat(where, "dataBase64 must be a base64 string"));
    }
    KEEL_ASSIGN_OR_RETURN(event.content_type,
                          OptionalString(members, EventField::kContentType, where));
    if (event.content_type.empty()) event.content_type = "application/octet-stream";
    return absl::OkStatus();
  }
  event.content_type = kJsonContentType;
  if (members[EventField::kData] == nullptr) {
    event.payload = "null";
  } else {
    event.payload = DataText(*members[EventField::kData], raw_event);
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> ParseExpected(const json::value& value, absl::string_view where) {
  if (value.is_uint64()) return value.get_uint64();
  if (value.is_int64() && value.get_int64() >= 0) return static_cast<uint64_t>(value.get_int64());
  return InvalidArgument(absl::StrCat(where, "expectedLastSequence must be a non-negative integer"));
}

// Parses event `index` (whose text is `raw`) into `body` (its event,
// partition key and, for a single-event body, the expected last sequence).
absl::Status ParseEvent(const json::value& value, absl::string_view raw, size_t index,
                        bool in_array, PublishBody& body) {
  const std::string where = in_array ? absl::StrCat("event ", index, ": ") : "";
  if (!value.is_object()) return InvalidArgument(absl::StrCat(where, "an event must be an object"));
  KEEL_ASSIGN_OR_RETURN(const EventMembers members, FindMembers(value.get_object(), where));
  Event event;
  KEEL_ASSIGN_OR_RETURN(event.type, OptionalString(members, EventField::kType, where));
  KEEL_ASSIGN_OR_RETURN(event.tenant, OptionalString(members, EventField::kTenant, where));
  KEEL_ASSIGN_OR_RETURN(event.id, OptionalString(members, EventField::kId, where));
  KEEL_ASSIGN_OR_RETURN(std::string key,
                        OptionalString(members, EventField::kIdempotencyKey, where));
  if (!key.empty()) event.idempotency_key = std::move(key);
  KEEL_RETURN_IF_ERROR(ParseAttributes(members[EventField::kAttributes], where, event));
  KEEL_RETURN_IF_ERROR(ParseData(members, raw, where, event));
  KEEL_ASSIGN_OR_RETURN(std::string partition_key,
                        OptionalString(members, EventField::kPartitionKey, where));
  if (const json::value* expected = members[EventField::kExpectedLastSequence]) {
    if (in_array) {
      return InvalidArgument(absl::StrCat(
          where, "expectedLastSequence applies to a whole publish: use the "
                 "Keel-Expected-Last-Sequence header for a batch"));
    }
    KEEL_ASSIGN_OR_RETURN(body.expected_last_sequence, ParseExpected(*expected, where));
  }
  body.events.push_back(std::move(event));
  body.partition_keys.push_back(std::move(partition_key));
  return absl::OkStatus();
}

// The Idempotency-Key header, for a single event without a key of its own.
void ApplyHeaderKey(absl::string_view header_idempotency_key, PublishBody& body) {
  Event& event = body.events.front();
  if (!event.idempotency_key && !header_idempotency_key.empty()) {
    event.idempotency_key = std::string(header_idempotency_key);
  }
}

// The Keel-Expected-Last-Sequence header, which must agree with the body.
absl::Status ApplyExpectedHeader(absl::string_view header_expected, PublishBody& body) {
  if (header_expected.empty()) return absl::OkStatus();
  uint64_t expected = 0;
  if (!absl::SimpleAtoi(header_expected, &expected)) {
    return InvalidArgument("Keel-Expected-Last-Sequence must be a non-negative integer");
  }
  if (body.expected_last_sequence && *body.expected_last_sequence != expected) {
    return InvalidArgument("Keel-Expected-Last-Sequence and expectedLastSequence disagree");
  }
  body.expected_last_sequence = expected;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PublishBody> ParsePublishBody(absl::string_view text,
                                             absl::string_view header_idempotency_key,
                                             absl::string_view header_expected) {
  std::optional<PublishBody> plain = ParsePlainEvent(text);
  if (!plain) return ParsePublishBodyGeneral(text, header_idempotency_key, header_expected);
  ApplyHeaderKey(header_idempotency_key, *plain);
  KEEL_RETURN_IF_ERROR(ApplyExpectedHeader(header_expected, *plain));
  return *std::move(plain);
}

absl::StatusOr<PublishBody> ParsePublishBodyGeneral(absl::string_view text,
                                                    absl::string_view header_idempotency_key,
                                                    absl::string_view header_expected) {
  boost::system::error_code error;
  // The document lives only while it is read into events: an arena (on the
  // stack for a small body) spares an allocation per string and object.
  unsigned char first_block[4096];
  json::monotonic_resource arena(first_block, sizeof(first_block));
  json::value root =
      json::parse(json::string_view(text.data(), text.size()), error, json::storage_ptr(&arena));
  if (error) return InvalidArgument(absl::StrCat("request body is not JSON: ", error.message()));
  PublishBody body;
  body.was_array = root.is_array();
  if (!root.is_array()) {
    KEEL_RETURN_IF_ERROR(ParseEvent(root, text, 0, false, body));
    ApplyHeaderKey(header_idempotency_key, body);
  } else {
    if (!header_idempotency_key.empty()) {
      return InvalidArgument("the Idempotency-Key header applies to single events; "
                             "give each event of a batch its own idempotencyKey");
    }
    const json::array& array = root.get_array();
    // Refused here, where every publish path (alone, joined, topic) sees it.
    if (array.empty()) return InvalidArgument("a publish needs at least one event");
    std::vector<absl::string_view> raw = client::RawElements(text);
    if (raw.size() != array.size()) raw.assign(array.size(), absl::string_view());
    body.events.reserve(array.size());
    body.partition_keys.reserve(array.size());
    for (size_t i = 0; i < array.size(); ++i) {
      KEEL_RETURN_IF_ERROR(ParseEvent(array[i], raw[i], i, true, body));
    }
  }
  KEEL_RETURN_IF_ERROR(ApplyExpectedHeader(header_expected, body));
  return body;
}

}  // namespace keel::server
