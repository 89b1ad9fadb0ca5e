#include "keel/cmd/keel/server/push/circuit_breaker.h"

#include <algorithm>

namespace keel::push {
namespace {

// How often a POST held back by a probe in flight asks again: the probe's
// outcome is awaited, not its timeout.
constexpr absl::Duration kProbeRecheck = absl::Milliseconds(50);

}  // namespace

CircuitBreaker::CircuitBreaker(CircuitPolicy policy, DeliveryStats& stats)
    : policy_(policy), stats_(stats) {}

CircuitBreaker::Gate CircuitBreaker::Acquire(absl::Time now) {
  MutexLock lock(&mu_);
  switch (state_) {
    case CircuitState::kClosed:
      return Gate{true, now};
    case CircuitState::kProbing:
      return Gate{false, now + std::min(kProbeRecheck, policy_.open_for)};
    case CircuitState::kOpen:
      if (now < open_until_) return Gate{false, open_until_};
      state_ = CircuitState::kProbing;
      stats_.CircuitChanged(state_, open_until_);
      return Gate{true, now};
  }
  return Gate{true, now};
}

void CircuitBreaker::Record(bool endpoint_failed, absl::Time now) {
  MutexLock lock(&mu_);
  if (!endpoint_failed) {
    consecutive_failures_ = 0;
    if (state_ != CircuitState::kClosed) {
      state_ = CircuitState::kClosed;
      stats_.CircuitChanged(state_, open_until_);
    }
    return;
  }
  if (state_ == CircuitState::kProbing) {
    Open(now);
    return;
  }
  ++consecutive_failures_;
  // A lane's POST sent before the circuit opened may fail after: it leaves
  // the open circuit as it is.
  if (state_ == CircuitState::kClosed && policy_.failure_threshold > 0 &&
      consecutive_failures_ >= policy_.failure_threshold) {
    Open(now);
  }
}

void CircuitBreaker::Open(absl::Time now) {
  state_ = CircuitState::kOpen;
  open_until_ = now + policy_.open_for;
  stats_.CircuitChanged(state_, open_until_);
}

}  // namespace keel::push
