#include "keel/drivers/jetstream/wake_signal.h"

#include <cerrno>
#include <ctime>

#include "absl/time/clock.h"

namespace keel::jetstream {

bool WakeSignal::Wait(absl::Duration timeout) {
  // sem_timedwait rather than a wait on the monotonic clock: ThreadSanitizer
  // knows it (and so the hand-over it orders), and its deadline is as good
  // as any condition variable's here.
  const timespec deadline = absl::ToTimespec(absl::Now() + timeout);
  while (true) {
    const int result = timeout == absl::InfiniteDuration() ? sem_wait(&semaphore_)
                                                           : sem_timedwait(&semaphore_, &deadline);
    if (result == 0) return true;
    if (errno == ETIMEDOUT) return false;
    // EINTR: wait on.
  }
}

}  // namespace keel::jetstream
