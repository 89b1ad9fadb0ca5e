#include "keel/drivers/jetstream/wake_signal.h"

#include <cerrno>
#include <ctime>

namespace keel::jetstream {

bool WakeSignal::Wait(absl::Duration timeout) {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  const timespec deadline = absl::ToTimespec(absl::DurationFromTimespec(now) + timeout);
  while (true) {
    const int result = timeout == absl::InfiniteDuration()
                           ? sem_wait(&semaphore_)
                           : sem_clockwait(&semaphore_, CLOCK_MONOTONIC, &deadline);
    if (result == 0) return true;
    if (errno == ETIMEDOUT) return false;
    // EINTR: wait on.
  }
}

}  // namespace keel::jetstream
