#include "keel/cmd/keel/server/push/retry_delay.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "absl/random/distributions.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"

namespace keel::push {

absl::Duration BackoffCeiling(const RetryPolicy& policy, int failed_attempts) {
  const double factor = std::pow(policy.multiplier, std::max(0, failed_attempts - 1));
  // Past the cap the product can overflow absl::Duration's range: compare
  // in seconds first.
  if (absl::ToDoubleSeconds(policy.initial_backoff) * factor >=
      absl::ToDoubleSeconds(policy.max_backoff)) {
    return policy.max_backoff;
  }
  return policy.initial_backoff * factor;
}

absl::Duration RetryDelay(const RetryPolicy& policy, int failed_attempts,
                          std::optional<absl::Duration> retry_after, absl::BitGenRef random) {
  const absl::Duration ceiling = BackoffCeiling(policy, failed_attempts);
  const double half = absl::ToDoubleSeconds(ceiling) / 2;
  absl::Duration delay = absl::Seconds(half + absl::Uniform(random, 0.0, half + 1e-9));
  if (retry_after) delay = std::max(delay, std::min(*retry_after, kMaxRetryAfter));
  return delay;
}

std::optional<absl::Duration> ParseRetryAfter(absl::string_view value, absl::Time now) {
  value = absl::StripAsciiWhitespace(value);
  uint64_t seconds = 0;
  if (absl::SimpleAtoi(value, &seconds)) {
    return absl::Seconds(static_cast<int64_t>(std::min<uint64_t>(seconds, 1u << 30)));
  }
  absl::Time at;
  std::string error;
  if (absl::ParseTime("%a, %d %b %Y %H:%M:%S GMT", std::string(value), &at, &error)) {
    return std::max(absl::ZeroDuration(), at - now);
  }
  return std::nullopt;
}

}  // namespace keel::push
