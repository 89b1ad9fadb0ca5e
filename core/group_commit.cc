#include "keel/core/group_commit.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "keel/core/errors.h"

namespace keel {
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

absl::Status GroupCommitter::Submit(QueuedCommit& append) {
  if (!Enqueue(append) && AwaitTurn(append) == kDone) return append.status;
  return Lead(append);
}

bool GroupCommitter::Enqueue(QueuedCommit& append) {
  std::lock_guard<std::mutex> lock(mu_);
  return EnqueueLocked(append);
}

bool GroupCommitter::EnqueueLocked(QueuedCommit& append) {
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

GroupCommitter::State GroupCommitter::AwaitTurn(QueuedCommit& append) {
  for (int i = 0; i < kSpins; ++i) {
    if (uint32_t state = append.state.load(std::memory_order_acquire); state != kWaiting) {
      return static_cast<State>(state);
    }
    CpuRelax();
  }
  uint32_t state = kWaiting;
  wake_[append.wake_slot].Wait([&] {
    state = append.state.load(std::memory_order_seq_cst);
    return state != kWaiting;
  });
  return static_cast<State>(state);
}

void GroupCommitter::SetState(QueuedCommit& member, State state) {
  WakeSlot& slot = wake_[member.wake_slot];
  member.state.store(state, std::memory_order_seq_cst);  // Last touch of `member`.
  slot.Wake();
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

GroupCommitter::GroupCommitter(size_t max_group_bytes, CommitFn commit)
    : max_group_bytes_(max_group_bytes),
      commit_(std::move(commit)),
      committer_([this] { RunCommitter(); }) {}

GroupCommitter::~GroupCommitter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  committer_cv_.notify_one();
  committer_.join();
}

void GroupCommitter::SubmitAsync(QueuedCommit& append) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // When it does not lead, whoever commits now takes it next.
    if (EnqueueLocked(append)) wake = ActivateCommitter();
  }
  if (wake) committer_cv_.notify_one();
}

absl::Status GroupCommitter::Lead(QueuedCommit& append) {
  std::unique_lock<std::mutex> lock(mu_);
  Linger(lock);
  absl::Status status;
  const Group group = CommitFront(lock, status);
  returning_ = group.size();
  QueuedCommit* next = nullptr;
  bool wake = false;
  if (!queue_.empty()) {
    if (CommitterTakesFront()) {
      wake = ActivateCommitter();
    } else {
      next = queue_.front();
    }
  }
  lock.unlock();

  // Wake outside the lock, so woken members do not block on it at once; the
  // next leader first, as the disk waits for it.
  if (wake) committer_cv_.notify_one();
  if (next != nullptr) SetState(*next, kLead);
  Complete(group, &append, status);
  return status;
}

void GroupCommitter::RunCommitter() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    committer_cv_.wait(lock, [this] { return committer_active_ || stopping_; });
    if (!committer_active_) return;  // Stopping, with nothing queued.
    absl::Status status;
    const Group group = CommitFront(lock, status);
    returning_ = 0;  // The committer does not linger: it has no members to wait for.
    QueuedCommit* next = nullptr;
    if (queue_.empty() || !CommitterTakesFront()) {
      committer_active_ = false;
      if (!queue_.empty()) next = queue_.front();
    }
    lock.unlock();
    if (next != nullptr) SetState(*next, kLead);
    Complete(group, nullptr, status);
    lock.lock();
  }
}

GroupCommitter::Group GroupCommitter::CommitFront(std::unique_lock<std::mutex>& lock,
                                                  absl::Status& status) {
  // Take a prefix of the queue within the byte budget (always >= 1).
  Group group;
  size_t bytes = 0;
  for (QueuedCommit* member : queue_) {
    if (!group.empty() && bytes + member->bytes > max_group_bytes_) break;
    group.push_back(member);
    bytes += member->bytes;
  }
  lock.unlock();
  const auto start = std::chrono::steady_clock::now();
  try {
    status = commit_(group);
  } catch (const std::exception& e) {  // E.g. std::bad_alloc: answer the group, go on.
    status = ExceptionStatus(e);
  }
  const Duration took = std::chrono::steady_clock::now() - start;
  lock.lock();
  queue_.erase(queue_.begin(), queue_.begin() + static_cast<ptrdiff_t>(group.size()));
  queued_bytes_ -= bytes;
  last_commit_ = took;
  return group;
}

bool GroupCommitter::CommitterTakesFront() const {
  // A waiting member can lead a group after a fast commit (no disk wait)
  // at the cost of one wake-up; an asynchronous one has nobody to lead it.
  return queue_.front()->done != nullptr || last_commit_ >= kLingerThreshold;
}

bool GroupCommitter::ActivateCommitter() {
  return !std::exchange(committer_active_, true);
}

void GroupCommitter::Complete(absl::Span<QueuedCommit* const> group, const QueuedCommit* self,
                              const absl::Status& status) {
  for (QueuedCommit* member : group) {
    if (member == self) continue;
    if (member->done) {
      std::function<void(absl::Status)> done = std::move(member->done);
      done(status);  // May free `member`.
      continue;
    }
    member->status = status;
    SetState(*member, kDone);
  }
}

size_t GroupCommitter::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

}  // namespace keel
