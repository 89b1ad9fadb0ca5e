// BatchPoster: sends one batch of one stream's events to a subscription's
// endpoint — POST, and on a failure that may pass (429, 408, 5xx, no
// answer) wait the retry delay (retry_delay.h) and POST again, up to the
// subscription's max attempts. The body is the same on every attempt; the
// headers are signed afresh with the secrets in force at each. Every POST
// first passes the subscription's CircuitBreaker, which holds it back while
// the endpoint is down (the wait ends early when the work is abandoned).
// Counts every attempt in the subscription's DeliveryStats.
//
// Both live delivery (StreamDelivery) and redrive (RedriveDelivery) send
// through it; what becomes of a batch that failed is theirs to decide.
//
// Thread safety: one caller at a time (a lane of the subscription's worker).
#ifndef KEEL_CMD_KEEL_SERVER_PUSH_BATCH_POSTER_H_
#define KEEL_CMD_KEEL_SERVER_PUSH_BATCH_POSTER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/random/random.h"
#include "absl/time/time.h"
#include "keel/cmd/keel/server/push/circuit_breaker.h"
#include "keel/cmd/keel/server/push/delivery_stats.h"
#include "keel/cmd/keel/server/push/endpoint_sender.h"
#include "keel/cmd/keel/server/push/push_subscription.h"
#include "keel/core/event.h"

namespace keel::push {

// Waits `delay`; false when the work in hand must be abandoned instead
// (the subscription stops or pauses).
using PushSleeper = std::function<bool(absl::Duration delay)>;
// The signing secrets in force now (they rotate while a batch retries).
using SecretSource = std::function<std::vector<std::string>()>;

struct PostResult {
  enum class Kind {
    kDelivered,  // The endpoint acknowledged the batch (2xx).
    kFailed,     // Rejected, or every attempt failed: `last` says how.
    kAbandoned,  // Stopped or paused while waiting to retry.
  };
  Kind kind = Kind::kAbandoned;
  AttemptOutcome last;  // The last attempt's outcome.
  int attempts = 0;     // POSTs made.
};

class BatchPoster {
 public:
  // `subscription`, `sender`, `circuit` and `stats` must outlive the poster.
  BatchPoster(const PushSubscription& subscription, EndpointSender& sender, CircuitBreaker& circuit,
              DeliveryStats& stats, PushSleeper sleep, SecretSource secrets);

  // Sends `events` of `stream`, whose cursors carry `epoch`.
  PostResult Post(const std::string& stream, const std::vector<Event>& events, uint64_t epoch);

 private:
  // Waits until the circuit lets a POST go; false when abandoned first.
  bool AwaitCircuit();

  const PushSubscription& subscription_;
  EndpointSender& sender_;
  CircuitBreaker& circuit_;
  DeliveryStats& stats_;
  PushSleeper sleep_;
  SecretSource secrets_;
  absl::BitGen random_;
};

}  // namespace keel::push

#endif  // KEEL_CMD_KEEL_SERVER_PUSH_BATCH_POSTER_H_
