// Backoff: the delays between retries, growing geometrically up to a cap.
//
// Delay(1) is `initial`, Delay(n) is initial * multiplier^(n-1), never more
// than `max`.
//
// Thread safety: a plain value type.
#ifndef KEEL_CORE_BACKOFF_H_
#define KEEL_CORE_BACKOFF_H_

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace keel {

struct Backoff {
  absl::Duration initial = absl::Milliseconds(100);
  double multiplier = 2.0;
  absl::Duration max = absl::Seconds(30);

  // The delay before retry number `retry` (1 for the first retry).
  absl::Duration Delay(int retry) const;
  // kInvalidArgument for a negative delay, a multiplier below 1 or max < initial.
  absl::Status Validate() const;
};

}  // namespace keel

#endif  // KEEL_CORE_BACKOFF_H_
