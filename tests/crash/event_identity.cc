#include "keel/tests/crash/event_identity.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace keel::crash_test {

namespace json = boost::json;

std::string EventData(absl::string_view key) {
  return json::serialize(json::object{{"key", json::string_view(key.data(), key.size())}});
}

absl::StatusOr<EventIdentity> IdentityOf(const json::object& event) {
  const json::value* sequence = event.if_contains("sequence");
  const json::value* id = event.if_contains("id");
  const json::value* data = event.if_contains("data");
  const json::value* key =
      data != nullptr && data->is_object() ? data->as_object().if_contains("key") : nullptr;
  if (sequence == nullptr || !sequence->is_number() || id == nullptr || !id->is_string() ||
      key == nullptr || !key->is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat("not an event of the crash loop: ", json::serialize(event)));
  }
  return EventIdentity{.sequence = sequence->to_number<uint64_t>(),
                       .id = std::string(id->as_string()),
                       .key = std::string(key->as_string())};
}

absl::StatusOr<EventIdentity> IdentityOf(absl::string_view event_json) {
  boost::system::error_code ec;
  json::value value = json::parse(json::string_view(event_json.data(), event_json.size()), ec);
  if (ec || !value.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("not a JSON object: ", event_json));
  }
  return IdentityOf(value.as_object());
}

std::string Describe(const EventIdentity& event) {
  return absl::StrCat("#", event.sequence, " key=", event.key, " id=", event.id);
}

}  // namespace keel::crash_test
