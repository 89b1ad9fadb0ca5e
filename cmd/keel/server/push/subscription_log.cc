#include "keel/cmd/keel/server/push/subscription_log.h"

#include <boost/json.hpp>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/push/subscription_json.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::push {
namespace json = boost::json;
namespace {

constexpr char kRecordType[] = "keel.push.subscription";
constexpr size_t kPage = 1000;

// One record: {"state":"active"|"paused"|"deleted","name":…,"subscription":{…},
// "redriveUntil":N?}.
absl::Status Apply(const Event& event, std::map<std::string, StoredSubscription>& out) {
  auto corrupt = [&](absl::string_view why) {
    return absl::DataLossError(
        absl::StrCat(kSubscriptionLogStream, " event ", event.sequence, ": ", why));
  };
  boost::system::error_code error;
  json::value value = json::parse(event.payload, error);
  if (error || !value.is_object()) return corrupt("not a JSON object");
  const json::object& record = value.get_object();
  const json::value* state = record.if_contains("state");
  const json::value* name = record.if_contains("name");
  if (state == nullptr || !state->is_string() || name == nullptr || !name->is_string()) {
    return corrupt("no state or name");
  }
  const std::string key(name->get_string());
  if (state->get_string() == "deleted") {
    out.erase(key);
    return absl::OkStatus();
  }
  const json::value* subscription = record.if_contains("subscription");
  if (subscription == nullptr) return corrupt("no subscription");
  absl::StatusOr<PushSubscription> parsed = ParseSubscriptionJson(json::serialize(*subscription));
  if (!parsed.ok()) return corrupt(parsed.status().message());
  uint64_t redrive_until = 0;
  if (const json::value* until = record.if_contains("redriveUntil")) {
    if (!until->is_number()) return corrupt("redriveUntil is not a number");
    error.clear();
    redrive_until = until->to_number<uint64_t>(error);
    if (error) return corrupt("redriveUntil is not a sequence");
  }
  out[key] = StoredSubscription{*std::move(parsed), state->get_string() == "paused", redrive_until};
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::map<std::string, StoredSubscription>> SubscriptionLog::Load() {
  absl::Status declared = bus_.Declare(kSubscriptionLogStream, StreamPolicy{});
  if (!declared.ok() && declared.code() != absl::StatusCode::kUnimplemented) return declared;
  std::map<std::string, StoredSubscription> out;
  Replayer* replayer = bus_.replayer();
  if (replayer == nullptr) return out;  // Nothing kept: subscriptions last as long as the process.
  ReplayRequest request;
  request.stream = kSubscriptionLogStream;
  request.limit = kPage;
  for (;;) {
    KEEL_ASSIGN_OR_RETURN(ReplayPage page, replayer->Replay(request));
    for (const Event& event : page.events) {
      if (event.type == kRecordType) KEEL_RETURN_IF_ERROR(Apply(event, out));
    }
    if (page.events.empty() || page.reached_end) return out;
    request.after = Position::After(page.next);
  }
}

absl::Status SubscriptionLog::Put(const StoredSubscription& stored) {
  json::object record;
  record["state"] = stored.paused ? "paused" : "active";
  record["name"] = stored.subscription.name;
  record["subscription"] = SubscriptionJson(stored.subscription, /*with_secrets=*/true);
  if (stored.redrive_until > 0) record["redriveUntil"] = stored.redrive_until;
  return Append(json::serialize(record));
}

absl::Status SubscriptionLog::Delete(const std::string& name) {
  json::object record;
  record["state"] = "deleted";
  record["name"] = name;
  return Append(json::serialize(record));
}

absl::Status SubscriptionLog::Append(std::string payload) {
  Event event;
  event.stream = kSubscriptionLogStream;
  event.type = kRecordType;
  event.content_type = "application/json";
  event.payload = std::move(payload);
  return bus_.Publish(std::move(event)).status();
}

}  // namespace keel::push
