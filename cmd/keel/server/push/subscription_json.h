// The JSON form of a PushSubscription (rfcs/0010-push-subscriptions.md,
// "Declaring"): what POST /v1/subscriptions takes and, with the secrets,
// what the subscription record stream keeps.
//
//   {"name":"billing","streams":"orders.*","typePrefix":"order.",
//    "tenant":"acme","endpoint":"https://hooks.example/keel",
//    "batchSize":100,"lingerMs":0,"timeoutMs":10000,
//    "retry":{"maxAttempts":8,"initialBackoffMs":500,"maxBackoffMs":300000,
//             "multiplier":2},
//    "start":"earliest","allowSelf":false,"secrets":["…"]}
//
// Every field but name, streams, endpoint and secrets is optional (the
// defaults of PushSubscription); an unknown field is kInvalidArgument.
//
// Thread safety: pure functions.
#ifndef KEEL_CMD_KEEL_SERVER_PUSH_SUBSCRIPTION_JSON_H_
#define KEEL_CMD_KEEL_SERVER_PUSH_SUBSCRIPTION_JSON_H_

#include <boost/json/object.hpp>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/cmd/keel/server/push/push_subscription.h"

namespace keel::push {

// Parses and validates (Validate) a declaration.
absl::StatusOr<PushSubscription> ParseSubscriptionJson(absl::string_view text);

// The declaration as a JSON object; the secrets only when `with_secrets`
// (the record stream), otherwise just how many there are.
boost::json::object SubscriptionJson(const PushSubscription& subscription, bool with_secrets);

}  // namespace keel::push

#endif  // KEEL_CMD_KEEL_SERVER_PUSH_SUBSCRIPTION_JSON_H_
