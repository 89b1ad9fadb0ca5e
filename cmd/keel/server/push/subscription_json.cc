#include "keel/cmd/keel/server/push/subscription_json.h"

#include <algorithm>
#include <boost/json.hpp>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/policy_json.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::push {
namespace json = boost::json;
namespace {

constexpr absl::string_view kFields[] = {
    "name",      "streams",   "typePrefix", "tenant",      "endpoint",
    "batchSize", "lingerMs",  "timeoutMs",  "retry",       "circuit",
    "start",     "allowSelf", "secrets",    "concurrency", "deadLetterRetention"};
constexpr absl::string_view kRetryFields[] = {"maxAttempts", "initialBackoffMs", "maxBackoffMs",
                                              "multiplier"};
constexpr absl::string_view kCircuitFields[] = {"failureThreshold", "openMs"};

const json::value* Field(const json::object& object, absl::string_view key) {
  const json::value* value = object.if_contains(json::string_view(key.data(), key.size()));
  return value == nullptr || value->is_null() ? nullptr : value;
}

template <size_t N>
absl::Status RejectUnknown(const json::object& object, const absl::string_view (&known)[N],
                           absl::string_view where) {
  for (const auto& [key, value] : object) {
    const absl::string_view name(key.data(), key.size());
    bool found = false;
    for (absl::string_view k : known) found = found || k == name;
    if (!found) return InvalidArgument(absl::StrCat("unknown field ", where, std::string(key)));
  }
  return absl::OkStatus();
}

absl::Status ReadString(const json::object& object, absl::string_view key, std::string& out) {
  const json::value* value = Field(object, key);
  if (value == nullptr) return absl::OkStatus();
  if (!value->is_string()) return InvalidArgument(absl::StrCat(key, " must be a string"));
  out = std::string(value->get_string());
  return absl::OkStatus();
}

absl::Status ReadUint(const json::object& object, absl::string_view key, uint64_t& out) {
  const json::value* value = Field(object, key);
  if (value == nullptr) return absl::OkStatus();
  if (value->is_uint64()) {
    out = value->get_uint64();
  } else if (value->is_int64() && value->get_int64() >= 0) {
    out = static_cast<uint64_t>(value->get_int64());
  } else {
    return InvalidArgument(absl::StrCat(key, " must be a non-negative integer"));
  }
  return absl::OkStatus();
}

absl::Status ReadMillis(const json::object& object, absl::string_view key, absl::Duration& out) {
  uint64_t ms = absl::ToInt64Milliseconds(out);
  KEEL_RETURN_IF_ERROR(ReadUint(object, key, ms));
  if (ms > (uint64_t{1} << 40)) return InvalidArgument(absl::StrCat(key, " is too large"));
  out = absl::Milliseconds(static_cast<int64_t>(ms));
  return absl::OkStatus();
}

// Reads an integer field into `out`, clamped to `max` (Validate rejects
// what is out of range, naming the field, so a huge value stays an error).
absl::Status ReadCount(const json::object& object, absl::string_view key, int max, int& out) {
  uint64_t value = out;
  KEEL_RETURN_IF_ERROR(ReadUint(object, key, value));
  out = static_cast<int>(std::min<uint64_t>(value, max));
  return absl::OkStatus();
}

// The object `key` holds, with only the `known` members; null when absent.
template <size_t N>
absl::StatusOr<const json::object*> NestedObject(const json::object& object, absl::string_view key,
                                                 const absl::string_view (&known)[N]) {
  const json::value* value = Field(object, key);
  if (value == nullptr) return nullptr;
  if (!value->is_object()) return InvalidArgument(absl::StrCat(key, " must be an object"));
  KEEL_RETURN_IF_ERROR(RejectUnknown(value->get_object(), known, absl::StrCat(key, ".")));
  return &value->get_object();
}

absl::Status ReadRetry(const json::object& object, RetryPolicy& retry) {
  KEEL_ASSIGN_OR_RETURN(const json::object* r, NestedObject(object, "retry", kRetryFields));
  if (r == nullptr) return absl::OkStatus();
  KEEL_RETURN_IF_ERROR(ReadCount(*r, "maxAttempts", 1000, retry.max_attempts));
  KEEL_RETURN_IF_ERROR(ReadMillis(*r, "initialBackoffMs", retry.initial_backoff));
  KEEL_RETURN_IF_ERROR(ReadMillis(*r, "maxBackoffMs", retry.max_backoff));
  if (const json::value* m = Field(*r, "multiplier"); m != nullptr) {
    if (!m->is_number()) return InvalidArgument("retry.multiplier must be a number");
    retry.multiplier = m->to_number<double>();
  }
  return absl::OkStatus();
}

absl::Status ReadCircuit(const json::object& object, CircuitPolicy& circuit) {
  KEEL_ASSIGN_OR_RETURN(const json::object* c, NestedObject(object, "circuit", kCircuitFields));
  if (c == nullptr) return absl::OkStatus();
  KEEL_RETURN_IF_ERROR(ReadCount(*c, "failureThreshold", 1'000'000, circuit.failure_threshold));
  return ReadMillis(*c, "openMs", circuit.open_for);
}

// The same members as a stream policy's deadLetterRetention, checked by
// the same parser.
absl::Status ReadDeadLetterRetention(const json::object& object, RetentionLimits& limits) {
  const json::value* value = Field(object, "deadLetterRetention");
  if (value == nullptr) return absl::OkStatus();
  json::object wrapped;
  wrapped["deadLetterRetention"] = *value;
  KEEL_ASSIGN_OR_RETURN(StreamPolicy policy, server::ParsePolicyObject(std::move(wrapped)));
  limits = policy.dead_letter_retention;
  return absl::OkStatus();
}

absl::Status ReadSecrets(const json::object& object, std::vector<std::string>& secrets) {
  const json::value* value = Field(object, "secrets");
  if (value == nullptr) return absl::OkStatus();
  if (!value->is_array()) return InvalidArgument("secrets must be an array of strings");
  for (const json::value& secret : value->get_array()) {
    if (!secret.is_string()) return InvalidArgument("secrets must be an array of strings");
    secrets.emplace_back(secret.get_string());
  }
  return absl::OkStatus();
}

absl::StatusOr<PushSubscription> FromObject(const json::object& object) {
  KEEL_RETURN_IF_ERROR(RejectUnknown(object, kFields, ""));
  PushSubscription s;
  std::string streams, start = "earliest";
  KEEL_RETURN_IF_ERROR(ReadString(object, "name", s.name));
  KEEL_RETURN_IF_ERROR(ReadString(object, "streams", streams));
  KEEL_ASSIGN_OR_RETURN(s.streams, StreamPattern::Parse(streams));
  KEEL_RETURN_IF_ERROR(ReadString(object, "typePrefix", s.type_prefix));
  KEEL_RETURN_IF_ERROR(ReadString(object, "tenant", s.tenant));
  KEEL_RETURN_IF_ERROR(ReadString(object, "endpoint", s.endpoint));
  uint64_t batch = s.batch_size;
  KEEL_RETURN_IF_ERROR(ReadUint(object, "batchSize", batch));
  s.batch_size = batch;
  KEEL_RETURN_IF_ERROR(ReadMillis(object, "lingerMs", s.linger));
  KEEL_RETURN_IF_ERROR(ReadMillis(object, "timeoutMs", s.timeout));
  KEEL_RETURN_IF_ERROR(ReadCount(object, "concurrency", 1'000'000, s.concurrency));
  KEEL_RETURN_IF_ERROR(ReadRetry(object, s.retry));
  KEEL_RETURN_IF_ERROR(ReadCircuit(object, s.circuit));
  KEEL_RETURN_IF_ERROR(ReadDeadLetterRetention(object, s.dead_letter_retention));
  KEEL_RETURN_IF_ERROR(ReadString(object, "start", start));
  if (start != "earliest" && start != "latest") {
    return InvalidArgument("start must be \"earliest\" or \"latest\"");
  }
  s.start_at_latest = start == "latest";
  if (const json::value* self = Field(object, "allowSelf"); self != nullptr) {
    if (!self->is_bool()) return InvalidArgument("allowSelf must be true or false");
    s.allow_self = self->get_bool();
  }
  KEEL_RETURN_IF_ERROR(ReadSecrets(object, s.secrets));
  KEEL_RETURN_IF_ERROR(Validate(s));
  return s;
}

}  // namespace

absl::StatusOr<PushSubscription> ParseSubscriptionJson(absl::string_view text) {
  boost::system::error_code error;
  json::value value = json::parse(json::string_view(text.data(), text.size()), error);
  if (error || !value.is_object()) {
    return InvalidArgument("the body must be a JSON object declaring a subscription");
  }
  return FromObject(value.get_object());
}

json::object SubscriptionJson(const PushSubscription& s, bool with_secrets) {
  json::object retry;
  retry["maxAttempts"] = s.retry.max_attempts;
  retry["initialBackoffMs"] = absl::ToInt64Milliseconds(s.retry.initial_backoff);
  retry["maxBackoffMs"] = absl::ToInt64Milliseconds(s.retry.max_backoff);
  retry["multiplier"] = s.retry.multiplier;
  json::object circuit;
  circuit["failureThreshold"] = s.circuit.failure_threshold;
  circuit["openMs"] = absl::ToInt64Milliseconds(s.circuit.open_for);
  json::object object;
  object["name"] = s.name;
  object["streams"] = s.streams.text();
  object["typePrefix"] = s.type_prefix;
  object["tenant"] = s.tenant;
  object["endpoint"] = s.endpoint;
  object["batchSize"] = s.batch_size;
  object["lingerMs"] = absl::ToInt64Milliseconds(s.linger);
  object["timeoutMs"] = absl::ToInt64Milliseconds(s.timeout);
  object["concurrency"] = s.concurrency;
  object["retry"] = std::move(retry);
  object["circuit"] = std::move(circuit);
  json::object dead_letters;
  dead_letters["maxAge"] = absl::FormatDuration(s.dead_letter_retention.max_age);
  dead_letters["maxBytes"] = s.dead_letter_retention.max_bytes;
  dead_letters["maxEvents"] = s.dead_letter_retention.max_events;
  object["deadLetterRetention"] = std::move(dead_letters);
  object["start"] = s.start_at_latest ? "latest" : "earliest";
  object["allowSelf"] = s.allow_self;
  if (with_secrets) {
    json::array secrets;
    for (const std::string& secret : s.secrets) secrets.emplace_back(secret);
    object["secrets"] = std::move(secrets);
  } else {
    object["secretCount"] = s.secrets.size();
  }
  return object;
}

}  // namespace keel::push
