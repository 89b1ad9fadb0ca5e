#include "keel/core/backoff.h"

#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"

namespace keel {

absl::Duration Backoff::Delay(int retry) const {
  absl::Duration delay = initial;
  // Stepwise, so a large retry count stops at the cap instead of overflowing.
  for (int i = 1; i < retry && delay < max; ++i) delay = delay * multiplier;
  return std::min(delay, max);
}

absl::Status Backoff::Validate() const {
  if (initial < absl::ZeroDuration() || max < initial || !(multiplier >= 1.0)) {
    return InvalidArgument(absl::StrCat("backoff needs 0 <= initial <= max and multiplier >= 1; got ",
                                        absl::FormatDuration(initial), ", ",
                                        absl::FormatDuration(max), ", ", multiplier));
  }
  return absl::OkStatus();
}

}  // namespace keel
