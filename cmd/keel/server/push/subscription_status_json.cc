#include "keel/cmd/keel/server/push/subscription_status_json.h"

#include <boost/json.hpp>

#include "keel/cmd/keel/server/json_codec.h"
#include "keel/cmd/keel/server/push/subscription_json.h"

namespace keel::push {
namespace json = boost::json;
namespace {

// {"state":"none"|"running"|"done"|"failed","until","cursor","remaining",
//  "redriven","lastError"?}
json::object RedriveObject(const SubscriptionStatus& status) {
  const RedriveProgress& redrive = status.redrive;
  const uint64_t remaining = redrive.until > redrive.cursor ? redrive.until - redrive.cursor : 0;
  json::object object;
  if (redrive.until == 0) {
    object["state"] = "none";
  } else if (remaining == 0) {
    object["state"] = "done";
  } else {
    object["state"] = status.counts.redrive_error.empty() ? "running" : "failed";
  }
  object["until"] = redrive.until;
  object["cursor"] = redrive.cursor;
  object["remaining"] = remaining;
  object["redriven"] = status.counts.redriven;
  if (!status.counts.redrive_error.empty()) object["lastError"] = status.counts.redrive_error;
  return object;
}

json::object StatusObject(const SubscriptionStatus& status) {
  json::object object = SubscriptionJson(status.subscription, /*with_secrets=*/false);
  object["state"] = status.paused ? "paused" : "active";
  object["deadLetterStream"] = status.subscription.DeadLetterStream();
  object["lag"] = status.lag;
  json::array streams;
  for (const StreamProgress& progress : status.streams) {
    json::object stream;
    stream["stream"] = progress.stream;
    stream["cursor"] = progress.cursor;
    stream["lag"] = progress.lag;
    streams.push_back(std::move(stream));
  }
  object["cursors"] = std::move(streams);
  const DeliveryCounts& c = status.counts;
  json::object counts;
  counts["deliveries"] = c.deliveries;
  counts["eventsDelivered"] = c.events_delivered;
  counts["failures"] = c.failures;
  counts["retries"] = c.retries;
  counts["deadLetters"] = c.dead_lettered;
  counts["lastStatus"] = c.last_status;
  counts["lastError"] = c.last_error;
  if (c.last_error_time != absl::InfinitePast()) {
    counts["lastErrorTime"] = server::FormatRfc3339(c.last_error_time);
  }
  const uint64_t answered = c.LatencyCount();
  counts["endpointLatencyMs"] =
      answered == 0 ? 0.0 : absl::ToDoubleMilliseconds(c.latency_sum) / answered;
  object["delivery"] = std::move(counts);
  json::object circuit;
  circuit["state"] = CircuitStateName(c.circuit);
  circuit["opens"] = c.circuit_opens;
  if (c.circuit != CircuitState::kClosed) {
    circuit["openUntil"] = server::FormatRfc3339(c.circuit_open_until);
  }
  object["circuitState"] = std::move(circuit);  // Beside the declaration's "circuit".
  object["redrive"] = RedriveObject(status);
  return object;
}

}  // namespace

std::string SubscriptionStatusJson(const SubscriptionStatus& status) {
  return json::serialize(StatusObject(status));
}

std::string SubscriptionListJson(const std::vector<SubscriptionStatus>& all) {
  json::array list;
  for (const SubscriptionStatus& status : all) list.push_back(StatusObject(status));
  json::object object;
  object["subscriptions"] = std::move(list);
  return json::serialize(object);
}

}  // namespace keel::push
