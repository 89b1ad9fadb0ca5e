// DeliveryRequest: one push POST — the JSON batch of one stream's events
// and its headers (rfcs/0010-push-subscriptions.md, "The request"):
//
//   {"subscription":"billing","stream":"orders","events":[<event>…]}
//
// where each <event> is the event object of a replay page (rfcs/0004 §5:
// id, sequence, cursor, type, time, tenant?, data, attributes?). Headers:
//
//   Content-Type: application/json
//   Keel-Subscription: billing
//   Keel-Stream: orders
//   Keel-Event-Ids: <id>,<id>,…          (in batch order)
//   Keel-Delivery-Attempt: 1             (1 for the first POST of the batch)
//   Keel-Timestamp: <Unix seconds>
//   Keel-Signature: v1=<hex>[,v1=<hex>]  (signature.h)
//
// The body is the same on every attempt of a batch; the timestamp and the
// signature are made afresh.
//
// Thread safety: pure functions.
#ifndef KEEL_CMD_KEEL_SERVER_PUSH_DELIVERY_REQUEST_H_
#define KEEL_CMD_KEEL_SERVER_PUSH_DELIVERY_REQUEST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/core/event.h"

namespace keel::push {

// The JSON body of a batch; cursors carry `epoch`.
std::string DeliveryBody(absl::string_view subscription, absl::string_view stream,
                         absl::Span<const Event> events, uint64_t epoch);

// The headers of attempt `attempt` of a batch, signed at `now`.
client::Headers DeliveryHeaders(absl::string_view subscription, absl::string_view stream,
                                absl::Span<const Event> events, int attempt,
                                const std::vector<std::string>& secrets, absl::string_view body,
                                absl::Time now);

}  // namespace keel::push

#endif  // KEEL_CMD_KEEL_SERVER_PUSH_DELIVERY_REQUEST_H_
