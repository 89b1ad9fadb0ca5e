// WakeSignal: wakes one waiting thread once, for the driver's hand-offs
// where dozens of publishers each wait for their own answer.
//
// A POSIX semaphore: a waiter blocks in the kernel at once (the standard
// library's semaphore spins and yields first, and a condition variable
// makes the woken thread fight for a lock again, both of which cost dearly
// with dozens of waiters on a few cores), and it may be destroyed as soon
// as its waiter returns, so Post() may be the poster's last use of it.
//
// Thread safety: Post() and Wait() may be called concurrently.
#ifndef KEEL_DRIVERS_JETSTREAM_WAKE_SIGNAL_H_
#define KEEL_DRIVERS_JETSTREAM_WAKE_SIGNAL_H_

#include <semaphore.h>

#include "absl/time/time.h"

namespace keel::jetstream {

class WakeSignal {
 public:
  WakeSignal() { sem_init(&semaphore_, 0, 0); }
  ~WakeSignal() { sem_destroy(&semaphore_); }
  WakeSignal(const WakeSignal&) = delete;
  WakeSignal& operator=(const WakeSignal&) = delete;

  void Post() { sem_post(&semaphore_); }
  // Waits for a Post() for at most `timeout`; false when none came.
  bool Wait(absl::Duration timeout = absl::InfiniteDuration());

 private:
  sem_t semaphore_;
};

}  // namespace keel::jetstream

#endif  // KEEL_DRIVERS_JETSTREAM_WAKE_SIGNAL_H_
