// The circuit breaker on its own, on a clock the test moves: it opens after
// the threshold of endpoint failures in a row, lets one probe through once
// open_for passed, and closes on an answer or opens again on a failure.
#include "keel/cmd/keel/server/push/circuit_breaker.h"

#include <gtest/gtest.h>

#include "keel/cmd/keel/server/push/endpoint_sender.h"

namespace keel::push {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1'700'000'000);

CircuitPolicy Policy(int threshold, absl::Duration open_for) {
  CircuitPolicy policy;
  policy.failure_threshold = threshold;
  policy.open_for = open_for;
  return policy;
}

TEST(CircuitBreakerTest, OpensAfterFailuresInARowThenProbesOnce) {
  DeliveryStats stats;
  CircuitBreaker circuit(Policy(3, absl::Seconds(10)), stats);
  absl::Time now = kStart;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(circuit.Acquire(now).go);
    circuit.Record(/*endpoint_failed=*/true, now);
  }
  ASSERT_TRUE(circuit.Acquire(now).go);
  circuit.Record(/*endpoint_failed=*/false, now);  // An answer resets the count.
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(circuit.Acquire(now).go) << i;
    circuit.Record(/*endpoint_failed=*/true, now);
  }
  CircuitBreaker::Gate held = circuit.Acquire(now + absl::Seconds(1));
  EXPECT_FALSE(held.go);
  EXPECT_EQ(held.ask_at, now + absl::Seconds(10));
  EXPECT_EQ(stats.Snapshot().circuit, CircuitState::kOpen);
  EXPECT_EQ(stats.Snapshot().circuit_opens, 1u);

  now += absl::Seconds(10);
  EXPECT_TRUE(circuit.Acquire(now).go);   // The probe.
  EXPECT_FALSE(circuit.Acquire(now).go);  // Everyone else waits for it.
  EXPECT_EQ(stats.Snapshot().circuit, CircuitState::kProbing);
  circuit.Record(/*endpoint_failed=*/true, now);  // It failed: open again.
  EXPECT_FALSE(circuit.Acquire(now + absl::Seconds(9)).go);
  EXPECT_EQ(stats.Snapshot().circuit_opens, 2u);

  now += absl::Seconds(10);
  EXPECT_TRUE(circuit.Acquire(now).go);
  circuit.Record(/*endpoint_failed=*/false, now);  // It was answered: closed.
  EXPECT_TRUE(circuit.Acquire(now).go);
  EXPECT_TRUE(circuit.Acquire(now).go);
  EXPECT_EQ(stats.Snapshot().circuit, CircuitState::kClosed);
}

TEST(CircuitBreakerTest, ThresholdZeroNeverOpens) {
  DeliveryStats stats;
  CircuitBreaker circuit(Policy(0, absl::Seconds(10)), stats);
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(circuit.Acquire(kStart).go);
    circuit.Record(/*endpoint_failed=*/true, kStart);
  }
  EXPECT_EQ(stats.Snapshot().circuit_opens, 0u);
}

TEST(CircuitBreakerTest, OnlyFailuresOfTheEndpointCount) {
  AttemptOutcome outcome;
  outcome.kind = AttemptOutcome::Kind::kRetry;
  outcome.status = 0;  // No answer.
  EXPECT_TRUE(EndpointFailed(outcome));
  outcome.status = 503;
  EXPECT_TRUE(EndpointFailed(outcome));
  outcome.status = 408;
  EXPECT_TRUE(EndpointFailed(outcome));
  outcome.status = 429;  // Pacing, with Retry-After: the endpoint is up.
  EXPECT_FALSE(EndpointFailed(outcome));
  outcome.kind = AttemptOutcome::Kind::kRejected;
  outcome.status = 400;
  EXPECT_FALSE(EndpointFailed(outcome));
}

}  // namespace
}  // namespace keel::push
