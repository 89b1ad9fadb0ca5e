// DeliveryStats: what a subscription's worker has done since the daemon
// started — for GET /v1/subscriptions/{name} and /metrics. Counters are
// kept in memory only; the durable part of a subscription's progress is its
// cursors.
//
// Thread safety: safe to update and read concurrently.
#ifndef KEEL_CMD_KEEL_SERVER_PUSH_DELIVERY_STATS_H_
#define KEEL_CMD_KEEL_SERVER_PUSH_DELIVERY_STATS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "keel/core/mutex.h"

namespace keel::push {

// CircuitBreaker's states (circuit_breaker.h).
enum class CircuitState { kClosed, kOpen, kProbing };
const char* CircuitStateName(CircuitState state);  // "closed", "open", "probing"

// The upper bounds of the endpoint latency histogram's buckets (the last,
// +Inf, is implied): from a local receiver's fraction of a millisecond to
// a slow endpoint's seconds.
inline constexpr std::array<absl::Duration, 12> kLatencyBounds = {
    absl::Milliseconds(1),   absl::Microseconds(2500), absl::Milliseconds(5),
    absl::Milliseconds(10),  absl::Milliseconds(25),   absl::Milliseconds(50),
    absl::Milliseconds(100), absl::Milliseconds(250),  absl::Milliseconds(500),
    absl::Seconds(1),        absl::Milliseconds(2500), absl::Seconds(10)};

struct DeliveryCounts {
  uint64_t deliveries = 0;        // Batches the endpoint acknowledged (2xx).
  uint64_t events_delivered = 0;  // Events in them.
  uint64_t failures = 0;          // POSTs that failed (any non-2xx or no answer).
  uint64_t retries = 0;           // POSTs repeated after a failure.
  uint64_t dead_lettered = 0;     // Events moved to the dead-letter stream.
  absl::Duration latency_sum;     // The total time of answered POSTs.
  // Answered POSTs by latency: [i] those within kLatencyBounds[i] and above
  // the bound before it; the last, those above every bound.
  std::array<uint64_t, kLatencyBounds.size() + 1> latency_buckets = {};
  // Answered POSTs (endpoint latency = latency_sum / this).
  uint64_t LatencyCount() const;
  int last_status = 0;     // Of the last POST; 0 when it had no answer.
  std::string last_error;  // The last failure's reason.
  absl::Time last_error_time = absl::InfinitePast();
  uint64_t redriven = 0;      // Dead letters the endpoint acknowledged on redrive.
  std::string redrive_error;  // Why the last redrive stopped; "" while none failed.
  CircuitState circuit = CircuitState::kClosed;
  absl::Time circuit_open_until = absl::InfinitePast();  // Of the last opening.
  uint64_t circuit_opens = 0;                            // Times the circuit opened.
};

class DeliveryStats {
 public:
  void Delivered(uint64_t events, int status, absl::Duration latency);
  void Failed(int status, const std::string& reason, absl::Duration latency);
  void Retried() { retries_.fetch_add(1, std::memory_order_relaxed); }
  void DeadLettered(uint64_t events) { dead_lettered_.fetch_add(events); }
  void Redriven(uint64_t events) { redriven_.fetch_add(events); }
  // A redrive stopped at a batch that failed; a new redrive clears it.
  void RedriveFailed(const std::string& reason);
  void RedriveStarted() { RedriveFailed(""); }
  // The circuit breaker moved to `state` (a move to kOpen counts an
  // opening, until `open_until`).
  void CircuitChanged(CircuitState state, absl::Time open_until);
  DeliveryCounts Snapshot() const;

 private:
  void Answered(absl::Duration latency) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::atomic<uint64_t> retries_{0};
  std::atomic<uint64_t> dead_lettered_{0};
  std::atomic<uint64_t> redriven_{0};
  mutable Mutex mu_;
  DeliveryCounts counts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace keel::push

#endif  // KEEL_CMD_KEEL_SERVER_PUSH_DELIVERY_STATS_H_
