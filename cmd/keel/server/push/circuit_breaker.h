// CircuitBreaker: whether a subscription's POSTs may go out now, so an
// endpoint that stopped answering gets a probe now and then instead of
// every lane's retries (CircuitPolicy in push_subscription.h):
//
//   closed    POSTs go out; `failure_threshold` endpoint failures in a row
//             (no answer, 408, 5xx) open the circuit
//   open      no POST goes out until `open_for` passed
//   probing   one POST is out to probe the endpoint, the others wait for
//             its outcome: an answer closes the circuit, a failure opens
//             it again
//
// An answer that blames the batch (2xx, 4xx other than 408) or paces the
// sender (429, whose Retry-After is honoured) shows the endpoint is up.
// Every POST, a probe included, is an attempt of its batch: a batch whose
// own POSTs always fail is still dead-lettered after its max attempts.
// Transitions are reported to the subscription's DeliveryStats.
//
// Thread safety: safe to call concurrently (the subscription's lanes).
#ifndef KEEL_CMD_KEEL_SERVER_PUSH_CIRCUIT_BREAKER_H_
#define KEEL_CMD_KEEL_SERVER_PUSH_CIRCUIT_BREAKER_H_

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "keel/cmd/keel/server/push/delivery_stats.h"
#include "keel/cmd/keel/server/push/push_subscription.h"
#include "keel/core/mutex.h"

namespace keel::push {

class CircuitBreaker {
 public:
  // `stats` must outlive the breaker.
  CircuitBreaker(CircuitPolicy policy, DeliveryStats& stats);

  struct Gate {
    bool go = true;     // Send the POST now, then Record its outcome.
    absl::Time ask_at;  // When !go: ask again then.
  };
  Gate Acquire(absl::Time now);
  // The outcome of a POST Acquire let go: `endpoint_failed` for no answer,
  // 408 or 5xx.
  void Record(bool endpoint_failed, absl::Time now);

 private:
  void Open(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const CircuitPolicy policy_;
  DeliveryStats& stats_;
  Mutex mu_;
  CircuitState state_ ABSL_GUARDED_BY(mu_) = CircuitState::kClosed;
  int consecutive_failures_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time open_until_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace keel::push

#endif  // KEEL_CMD_KEEL_SERVER_PUSH_CIRCUIT_BREAKER_H_
