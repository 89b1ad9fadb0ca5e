// Clock: the source of event publish times, injectable for tests.
//
// Thread safety: implementations must be safe for concurrent Now() calls.
#ifndef KEEL_CORE_CLOCK_H_
#define KEEL_CORE_CLOCK_H_

#include "absl/base/thread_annotations.h"
#include "keel/core/mutex.h"
#include "absl/time/time.h"

namespace keel {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;

  // The process-wide real-time clock (never destroyed).
  static Clock* Real();
};

// A clock that only moves when told; for tests of time-based behaviour.
class ManualClock : public Clock {
 public:
  explicit ManualClock(absl::Time start = absl::FromUnixSeconds(1'700'000'000)) : now_(start) {}
  absl::Time Now() const override;
  void Advance(absl::Duration d);
  void Set(absl::Time t);

 private:
  mutable Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace keel

#endif  // KEEL_CORE_CLOCK_H_
