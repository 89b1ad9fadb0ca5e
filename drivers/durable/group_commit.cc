#include "drivers/durable/group_commit.h"

#include <algorithm>
#include <thread>

namespace keel::durable {
namespace {

// Spins before sleeping: a group's members are often woken within a few
// microseconds, cheaper than a futex sleep and wake.
constexpr int kSpins = 64;

void CpuRelax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

}  // namespace

absl::Status GroupCommitter::Submit(PendingAppend& append) {
  if (!Enqueue(append) && AwaitTurn(append) == kDone) return append.status;
  return Lead(append);
}

bool GroupCommitter::Enqueue(PendingAppend& append) {
  std::lock_guard<std::mutex> lock(mu_);
  append.state.store(kWaiting, std::memory_order_relaxed);
  append.wake_slot = next_slot_++ % kWakeSlots;
  queue_.push_back(&append);
  queued_bytes_ += append.bytes;
  if (returning_ > 0) {
    --returning_;
    if (lingering_ && (returning_ == 0 || queued_bytes_ >= max_group_bytes_)) {
      linger_cv_.notify_one();
    }
  }
  return queue_.front() == &append;
}

GroupCommitter::State GroupCommitter::AwaitTurn(PendingAppend& append) {
  std::atomic<uint32_t>& slot = wake_[append.wake_slot];
  for (int i = 0; i < kSpins; ++i) {
    if (uint32_t state = append.state.load(std::memory_order_acquire); state != kWaiting) {
      return static_cast<State>(state);
    }
    CpuRelax();
  }
  while (true) {
    // Read the slot before the state: a SetState after this read changes the
    // slot, so wait() returns at once instead of missing the wake-up.
    const uint32_t seen = slot.load(std::memory_order_acquire);
    if (uint32_t state = append.state.load(std::memory_order_acquire); state != kWaiting) {
      return static_cast<State>(state);
    }
    slot.wait(seen, std::memory_order_acquire);
  }
}

void GroupCommitter::SetState(PendingAppend& member, State state) {
  std::atomic<uint32_t>& slot = wake_[member.wake_slot];
  member.state.store(state, std::memory_order_release);  // Last touch of `member`.
  slot.fetch_add(1, std::memory_order_release);
  slot.notify_all();
}

void GroupCommitter::Linger(std::unique_lock<std::mutex>& lock) {
  if (returning_ > 0 && last_commit_ >= kLingerThreshold) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::min<Duration>(kMaxLinger, last_commit_ / 2);
    lingering_ = true;
    linger_cv_.wait_until(lock, deadline, [this] {
      return returning_ == 0 || queued_bytes_ >= max_group_bytes_;
    });
    lingering_ = false;
  }
  returning_ = 0;  // Whoever has not come back by now joins a later group.
}

absl::Status GroupCommitter::Lead(PendingAppend& append) {
  std::unique_lock<std::mutex> lock(mu_);
  Linger(lock);
  // Take a prefix of the queue within the byte budget (always >= 1).
  std::vector<PendingAppend*> group;
  size_t bytes = 0;
  for (PendingAppend* member : queue_) {
    if (!group.empty() && bytes + member->bytes > max_group_bytes_) break;
    group.push_back(member);
    bytes += member->bytes;
  }
  lock.unlock();

  const auto start = std::chrono::steady_clock::now();
  absl::Status status = commit_(group);
  const Duration took = std::chrono::steady_clock::now() - start;

  lock.lock();
  queue_.erase(queue_.begin(), queue_.begin() + static_cast<ptrdiff_t>(group.size()));
  queued_bytes_ -= bytes;
  last_commit_ = took;
  returning_ = group.size();
  PendingAppend* next = queue_.empty() ? nullptr : queue_.front();
  lock.unlock();

  // Wake outside the lock, so woken members do not block on it at once.
  for (PendingAppend* member : group) {
    if (member == &append) continue;
    member->status = status;
    SetState(*member, kDone);
  }
  if (next != nullptr) SetState(*next, kLead);
  return status;
}

size_t GroupCommitter::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

}  // namespace keel::durable
