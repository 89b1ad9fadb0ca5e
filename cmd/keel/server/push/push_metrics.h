// The push subscriptions' part of /metrics (Prometheus text exposition),
// one series per subscription in each family, labelled `subscription`:
// lag, counters of deliveries, events, failures, retries, dead letters and
// redriven letters, the circuit's state and openings, and the endpoint's
// latency as a histogram (buckets kLatencyBounds, in seconds).
//
// Thread safety: a pure function.
#ifndef KEEL_CMD_KEEL_SERVER_PUSH_PUSH_METRICS_H_
#define KEEL_CMD_KEEL_SERVER_PUSH_PUSH_METRICS_H_

#include <string>
#include <vector>

#include "keel/cmd/keel/server/push/push_service.h"

namespace keel::push {

std::string PushMetricsText(const std::vector<SubscriptionStatus>& subscriptions);

}  // namespace keel::push

#endif  // KEEL_CMD_KEEL_SERVER_PUSH_PUSH_METRICS_H_
