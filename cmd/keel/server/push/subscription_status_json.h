// The JSON answers of /v1/subscriptions (rfcs/0010-push-subscriptions.md,
// "HTTP"): a subscription's declaration (without its secrets), state,
// per-stream cursors and delivery counters.
//
// Thread safety: pure functions.
#ifndef KEEL_CMD_KEEL_SERVER_PUSH_SUBSCRIPTION_STATUS_JSON_H_
#define KEEL_CMD_KEEL_SERVER_PUSH_SUBSCRIPTION_STATUS_JSON_H_

#include <string>
#include <vector>

#include "keel/cmd/keel/server/push/push_service.h"

namespace keel::push {

std::string SubscriptionStatusJson(const SubscriptionStatus& status);
// {"subscriptions":[<status>…]}
std::string SubscriptionListJson(const std::vector<SubscriptionStatus>& all);

}  // namespace keel::push

#endif  // KEEL_CMD_KEEL_SERVER_PUSH_SUBSCRIPTION_STATUS_JSON_H_
