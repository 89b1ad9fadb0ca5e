// The wait before the next attempt of a failed push: exponential backoff
// with jitter, under a cap, and no shorter than the endpoint's Retry-After.
//
// The backoff before attempt n+1 is d = min(initial * multiplier^(n-1), max),
// and the wait a uniform draw from [d/2, d] ("equal jitter"): retries of
// many subscriptions spread out, yet each still backs off. A Retry-After
// (seconds, or an HTTP date) longer than that wins, up to kMaxRetryAfter.
//
// Thread safety: pure functions but the random draw, which takes its
// generator from the caller.
#ifndef KEEL_CMD_KEEL_SERVER_PUSH_RETRY_DELAY_H_
#define KEEL_CMD_KEEL_SERVER_PUSH_RETRY_DELAY_H_

#include <optional>

#include "absl/random/bit_gen_ref.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/cmd/keel/server/push/push_subscription.h"

namespace keel::push {

// An endpoint cannot hold a subscription back longer than this per attempt.
inline constexpr absl::Duration kMaxRetryAfter = absl::Hours(1);

// The capped exponential backoff after `failed_attempts` (>= 1) failures,
// before jitter.
absl::Duration BackoffCeiling(const RetryPolicy& policy, int failed_attempts);

// The wait after `failed_attempts` failures, given the Retry-After the last
// answer carried (if any).
absl::Duration RetryDelay(const RetryPolicy& policy, int failed_attempts,
                          std::optional<absl::Duration> retry_after, absl::BitGenRef random);

// A Retry-After value: delay-seconds or an IMF-fixdate, relative to `now`;
// nullopt when it is neither.
std::optional<absl::Duration> ParseRetryAfter(absl::string_view value, absl::Time now);

}  // namespace keel::push

#endif  // KEEL_CMD_KEEL_SERVER_PUSH_RETRY_DELAY_H_
