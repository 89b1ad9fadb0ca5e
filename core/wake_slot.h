// WakeSlot: a word threads sleep on until a condition they check holds, on
// a Linux futex directly.
//
// std::atomic<T>::wait in libstdc++ 12 spins again (with sched_yield) after
// the caller's own spin, then sleeps through a process-wide table of waiter
// pools, and notify_all makes a system call whether or not anyone sleeps.
// A slot counts its sleepers instead, so a wake-up with nobody asleep is a
// load and an increment, and a sleeper goes to the kernel at once.
//
// Usage: the waker makes the condition true (a store the waiter reads),
// then calls Wake(); the waiter calls Wait(condition). The sleeper count
// and the condition are both read and written sequentially consistent, so
// either the waker sees the sleeper or the sleeper sees the condition.
//
// Thread safety: any number of waiters and wakers at once; a wake-up meant
// for another waiter of the same slot is only a spurious one.
#ifndef KEEL_CORE_WAKE_SLOT_H_
#define KEEL_CORE_WAKE_SLOT_H_

#include <atomic>
#include <cstdint>

namespace keel {

class WakeSlot {
 public:
  // Returns once `ready()` is true; sleeps in between.
  template <typename Ready>
  void Wait(Ready ready) {
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    while (true) {
      // Read the generation before the condition: a Wake after this read
      // changes it, so the sleep returns at once instead of missing it.
      const uint32_t seen = generation_.load(std::memory_order_seq_cst);
      if (ready()) break;
      Sleep(seen);
    }
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
  }

  // Wakes every sleeper of the slot (after the condition was made true).
  void Wake() {
    generation_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) WakeSleepers();
  }

 private:
  // Sleeps while the generation is still `seen`.
  void Sleep(uint32_t seen);
  void WakeSleepers();

  std::atomic<uint32_t> generation_{0};
  std::atomic<uint32_t> sleepers_{0};
};

}  // namespace keel

#endif  // KEEL_CORE_WAKE_SLOT_H_
