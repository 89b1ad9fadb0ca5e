#include "keel/core/mutex.h"

#include <chrono>

namespace keel {
namespace {

// Adapts Mutex to the BasicLockable a condition_variable_any waits with,
// without the Await bookkeeping of Mutex::Unlock (the waiter re-locks).
struct RawLock {
  std::shared_mutex& mu;
  void lock() { mu.lock(); }
  void unlock() { mu.unlock(); }
};

std::chrono::system_clock::time_point ToChrono(absl::Time deadline) {
  return absl::ToChronoTime(deadline);
}

}  // namespace

void Mutex::Await(const std::function<bool()>& condition) {
  awaiters_.fetch_add(1, std::memory_order_acq_rel);
  RawLock lock{mu_};
  while (!condition()) released_.wait(lock);
  awaiters_.fetch_sub(1, std::memory_order_acq_rel);
}

bool Mutex::AwaitWithTimeout(const std::function<bool()>& condition, absl::Duration timeout) {
  const auto deadline = ToChrono(absl::Now() + timeout);
  awaiters_.fetch_add(1, std::memory_order_acq_rel);
  RawLock lock{mu_};
  bool held = condition();
  while (!held && released_.wait_until(lock, deadline) != std::cv_status::timeout) {
    held = condition();
  }
  if (!held) held = condition();
  awaiters_.fetch_sub(1, std::memory_order_acq_rel);
  return held;
}

void CondVar::Wait(Mutex* mu) {
  RawLock lock{mu->mu_};
  waiters_.fetch_add(1, std::memory_order_acq_rel);
  cv_.wait(lock);
  waiters_.fetch_sub(1, std::memory_order_acq_rel);
}

bool CondVar::WaitWithDeadline(Mutex* mu, absl::Time deadline) {
  RawLock lock{mu->mu_};
  waiters_.fetch_add(1, std::memory_order_acq_rel);
  const bool timed_out = cv_.wait_until(lock, ToChrono(deadline)) == std::cv_status::timeout;
  waiters_.fetch_sub(1, std::memory_order_acq_rel);
  return timed_out;
}

void Notification::Notify() {
  MutexLock lock(&mu_);
  notified_ = true;
  cv_.SignalAll();
}

bool Notification::HasBeenNotified() const {
  MutexLock lock(&mu_);
  return notified_;
}

void Notification::WaitForNotification() const {
  MutexLock lock(&mu_);
  while (!notified_) cv_.Wait(&mu_);
}

bool Notification::WaitForNotificationWithTimeout(absl::Duration timeout) const {
  const absl::Time deadline = absl::Now() + timeout;
  MutexLock lock(&mu_);
  while (!notified_) {
    if (cv_.WaitWithDeadline(&mu_, deadline)) return notified_;
  }
  return true;
}

}  // namespace keel
