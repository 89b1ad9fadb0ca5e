#include "keel/cmd/keel/server/policy_json.h"

#include <boost/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "keel/cmd/keel/server/json_codec.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::server {
namespace json = boost::json;
namespace {

// JSON member -> key of the text form (core/stream_policy.h).
struct Member {
  absl::string_view json;
  absl::string_view key;
};
constexpr Member kRetention[] = {
    {"maxAge", "max_age"}, {"maxBytes", "max_bytes"}, {"maxEvents", "max_events"}};
constexpr Member kDeadLetter[] = {{"maxAge", "dead_letter.max_age"},
                                  {"maxBytes", "dead_letter.max_bytes"},
                                  {"maxEvents", "dead_letter.max_events"}};
constexpr Member kHot[] = {
    {"maxAge", "hot.max_age"}, {"maxBytes", "hot.max_bytes"}, {"maxEvents", "hot.max_events"}};
constexpr Member kTop[] = {{"maxPayloadBytes", "max_payload_bytes"},
                           {"dedupeWindow", "dedupe_window"},
                           {"partitions", "partitions"}};

absl::StatusOr<std::string> ScalarText(const json::value& value, absl::string_view name) {
  if (value.is_string()) return std::string(value.get_string());
  if (value.is_uint64()) return absl::StrCat(value.get_uint64());
  if (value.is_int64() && value.get_int64() >= 0) return absl::StrCat(value.get_int64());
  return InvalidArgument(
      absl::StrCat("policy member '", name, "' must be a non-negative integer or a string"));
}

// Appends "key=value" items for the members of `object` listed in `members`.
template <size_t N>
absl::Status AppendItems(const json::object& object, const Member (&members)[N],
                         absl::string_view where, std::vector<std::string>& items) {
  for (const auto& [name, value] : object) {
    const absl::string_view member(name.data(), name.size());
    const Member* found = nullptr;
    for (const Member& candidate : members) {
      if (candidate.json == member) found = &candidate;
    }
    if (found == nullptr) {
      return InvalidArgument(absl::StrCat("unknown policy member '", where, member, "'"));
    }
    KEEL_ASSIGN_OR_RETURN(std::string text, ScalarText(value, absl::StrCat(where, member)));
    items.push_back(absl::StrCat(found->key, "=", text));
  }
  return absl::OkStatus();
}

absl::Status AppendGroup(const json::value& value, const Member (&members)[3],
                         absl::string_view where, std::vector<std::string>& items) {
  if (!value.is_object()) {
    return InvalidArgument(absl::StrCat("policy member '", where, "' must be an object"));
  }
  return AppendItems(value.get_object(), members, absl::StrCat(where, "."), items);
}

std::string LimitsJson(const RetentionLimits& limits) {
  return absl::StrCat("{\"maxAge\":", JsonString(absl::FormatDuration(limits.max_age)),
                      ",\"maxBytes\":", limits.max_bytes, ",\"maxEvents\":", limits.max_events,
                      "}");
}

}  // namespace

absl::StatusOr<StreamPolicy> ParsePolicyJson(absl::string_view body) {
  boost::system::error_code error;
  json::value root = json::parse(json::string_view(body.data(), body.size()), error);
  if (error) return InvalidArgument(absl::StrCat("request body is not JSON: ", error.message()));
  if (!root.is_object()) return InvalidArgument("a stream policy must be a JSON object");
  return ParsePolicyObject(std::move(root.get_object()));
}

absl::StatusOr<StreamPolicy> ParsePolicyObject(json::object top) {
  std::vector<std::string> items;
  for (auto [name, members] : {std::pair<const char*, const Member(*)[3]>{"retention", &kRetention},
                               {"deadLetterRetention", &kDeadLetter},
                               {"hotRetention", &kHot}}) {
    if (const json::value* group = top.if_contains(name)) {
      KEEL_RETURN_IF_ERROR(AppendGroup(*group, *members, name, items));
      top.erase(name);
    }
  }
  KEEL_RETURN_IF_ERROR(AppendItems(top, kTop, "", items));
  return StreamPolicy::Parse(absl::StrJoin(items, " "));
}

std::string PolicyJson(const StreamPolicy& policy) {
  return absl::StrCat("{\"retention\":", LimitsJson(policy.retention),
                      ",\"maxPayloadBytes\":", policy.max_payload_bytes,
                      ",\"dedupeWindow\":", JsonString(absl::FormatDuration(policy.dedupe_window)),
                      ",\"deadLetterRetention\":", LimitsJson(policy.dead_letter_retention),
                      ",\"hotRetention\":", LimitsJson(policy.hot),
                      ",\"partitions\":", policy.partitions, "}");
}

}  // namespace keel::server
