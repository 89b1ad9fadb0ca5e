#include "keel/core/clock.h"

namespace keel {
namespace {

class RealClock : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
};

}  // namespace

Clock* Clock::Real() {
  static RealClock* const clock = new RealClock();
  return clock;
}

absl::Time ManualClock::Now() const {
  MutexLock lock(&mu_);
  return now_;
}

void ManualClock::Advance(absl::Duration d) {
  MutexLock lock(&mu_);
  now_ += d;
}

void ManualClock::Set(absl::Time t) {
  MutexLock lock(&mu_);
  now_ = t;
}

}  // namespace keel
