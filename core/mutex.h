// Mutex, CondVar and Notification with the subset of Abseil's API that Keel
// uses, built on the standard library.
//
// Why not absl::Mutex: Debian's Abseil is compiled without ThreadSanitizer
// annotations, so TSan cannot see absl::Mutex acquire and release and
// reports every access it guards as a race. std::shared_mutex and
// std::condition_variable_any are intercepted by every sanitizer, so Keel's
// ThreadSanitizer runs stay meaningful. The thread-safety annotations are
// Abseil's, so clang's -Wthread-safety still checks ABSL_GUARDED_BY.
//
// Await(condition) re-evaluates the condition whenever the mutex is
// released by another thread, as absl::Mutex::Await does.
//
// Thread safety: these are the synchronisation primitives.
#ifndef KEEL_CORE_MUTEX_H_
#define KEEL_CORE_MUTEX_H_

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <shared_mutex>

#include "absl/base/thread_annotations.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace keel {

class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  // Touches nothing of the mutex once it is released: a waiter woken by
  // what this thread did under the lock may destroy it at once (a
  // Notification waited on and then freed, for one). The awaiters are woken
  // while the lock is still held; they wait for it before re-checking.
  void Unlock() ABSL_UNLOCK_FUNCTION() {
    if (awaiters_.load(std::memory_order_acquire) > 0) released_.notify_all();
    mu_.unlock();
  }
  void ReaderLock() ABSL_SHARED_LOCK_FUNCTION() { mu_.lock_shared(); }
  void ReaderUnlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock_shared(); }

  // Blocks (holding the lock on return) until `condition()` is true.
  void Await(const std::function<bool()>& condition) ABSL_EXCLUSIVE_LOCKS_REQUIRED(this);
  // As Await but gives up after `timeout`; returns whether the condition held.
  bool AwaitWithTimeout(const std::function<bool()>& condition, absl::Duration timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(this);

 private:
  friend class CondVar;
  std::shared_mutex mu_;
  std::condition_variable_any released_;
  std::atomic<int> awaiters_{0};
};

class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

class ABSL_SCOPED_LOCKABLE ReaderMutexLock {
 public:
  explicit ReaderMutexLock(Mutex* mu) ABSL_SHARED_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->ReaderLock();
  }
  ~ReaderMutexLock() ABSL_UNLOCK_FUNCTION() { mu_->ReaderUnlock(); }
  ReaderMutexLock(const ReaderMutexLock&) = delete;
  ReaderMutexLock& operator=(const ReaderMutexLock&) = delete;

 private:
  Mutex* const mu_;
};

class CondVar {
 public:
  // `mu` must be held exclusively; it is released while waiting.
  void Wait(Mutex* mu);
  // Returns true if the deadline passed (as absl::CondVar does).
  bool WaitWithDeadline(Mutex* mu, absl::Time deadline);
  bool WaitWithTimeout(Mutex* mu, absl::Duration timeout) {
    return WaitWithDeadline(mu, absl::Now() + timeout);
  }
  // Free when nobody waits (a signaller that finds no waiter skips the
  // condition variable's own lock): thousands of subscriptions that are
  // polled rather than waited on are signalled on every delivery.
  void Signal() {
    if (waiters_.load(std::memory_order_acquire) > 0) cv_.notify_one();
  }
  void SignalAll() {
    if (waiters_.load(std::memory_order_acquire) > 0) cv_.notify_all();
  }

 private:
  std::condition_variable_any cv_;
  // Threads in Wait*: counted under the waiter's mutex, before it waits, so a
  // signaller that changed the waited-on state under that mutex sees them.
  std::atomic<int> waiters_{0};
};

// A one-shot event: Notify() once, any number of waiters.
class Notification {
 public:
  void Notify();
  bool HasBeenNotified() const;
  void WaitForNotification() const;
  bool WaitForNotificationWithTimeout(absl::Duration timeout) const;

 private:
  mutable Mutex mu_;
  mutable CondVar cv_;
  bool notified_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace keel

#endif  // KEEL_CORE_MUTEX_H_
