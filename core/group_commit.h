// GroupCommitter: coalesces concurrent publishes into one store write.
//
// The storage engine (core/log_bus.h) queues every append, trim and key
// collection here, so that its log sees one mutation at a time, in order.
// LevelDB's writer queue: every publisher enqueues its QueuedCommit; the one
// at the front becomes the leader, takes every queued append (up to a byte
// budget) into one group, runs the commit function once for the group
// without holding the queue lock, and hands the result to each member. A
// lone publisher is its own leader at once, so grouping adds no latency to
// it; under load, one store write (and one fsync) serves many publishers.
//
// Linger: after a slow commit (>= kLingerThreshold, i.e. one that waited for
// the disk), the next leader waits a little — until as many appends have
// queued since that commit as it had members (the members coming back, or
// others), the byte budget is full, or min(kMaxLinger, previous commit / 2)
// has passed — before it takes its group. Without it, the members of group k come back during
// commit k+1 and groups alternate between few and many members. A publisher that publishes alone
// never lingers: it is the only member of the previous group, so it is back as soon as it queues.
// Fast commits (no fsync) never linger.
//
// Waiting: followers spin briefly, then sleep on a futex (core/wake_slot.h),
// not a condition variable, and the leader wakes its group after releasing
// the queue lock: with tens of publishers per commit, each hand-off was
// several futex calls under a contended lock. A member that is still
// spinning when its group is done costs its leader no system call.
//
// Asynchronous members and the committer thread: SubmitAsync queues an
// append that has no thread waiting for it; its `done` is called with the
// group's status once committed. Such appends are committed by a committer
// thread (sleeping until needed), which also takes over from a leader after
// a slow commit while others are queued: it then commits group after group
// without the hand-off to a woken member between them, and stops when the
// queue is empty or a fast commit can hand over to a waiting member. An I/O
// thread can so publish without blocking, and without the context switches
// of a waiting thread per publish. The
// committer thread does not linger, so lingering applies only to groups a
// waiting member leads.
//
// Thread safety: Submit and SubmitAsync are called from any number of
// threads; the commit function is never run concurrently with itself (an
// exception from it is the group's status). `done` runs on the committer
// thread or the leader's and must neither block, throw, nor destroy the
// committer.
#ifndef KEEL_CORE_GROUP_COMMIT_H_
#define KEEL_CORE_GROUP_COMMIT_H_

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "keel/core/wake_slot.h"

namespace keel {

// One unit of work waiting for its group: the caller derives from it (a
// publish, a trim, ...) and its commit function casts the members back.
struct QueuedCommit {
  size_t bytes = 0;  // Counts against the group's byte budget.

  // For SubmitAsync: called with the group's status; the last use of the
  // member by the committer (it may free the member).
  std::function<void(absl::Status)> done;

  // Owned by GroupCommitter.
  absl::Status status;
  std::atomic<uint32_t> state{0};  // GroupCommitter::State.
  size_t wake_slot = 0;
};

class GroupCommitter {
 public:
  using CommitFn = std::function<absl::Status(absl::Span<QueuedCommit* const> group)>;
  using Duration = std::chrono::steady_clock::duration;

  static constexpr Duration kLingerThreshold = std::chrono::microseconds(50);
  static constexpr Duration kMaxLinger = std::chrono::milliseconds(2);

  GroupCommitter(size_t max_group_bytes, CommitFn commit);
  // Stops the committer thread; nothing may be queued any more.
  ~GroupCommitter();

  // Blocks until `append`'s group is committed; returns the group's status.
  absl::Status Submit(QueuedCommit& append);
  // Queues `append` (with `done` set) and returns; `append` must live until
  // `done` is called.
  void SubmitAsync(QueuedCommit& append);

  // Appends waiting or being committed (for tests and metrics).
  size_t queued() const;

 private:
  enum State : uint32_t { kWaiting = 0, kDone = 1, kLead = 2 };
  // A group's members: inline up to a size most groups stay within, so a
  // commit allocates nothing for its list.
  using Group = absl::InlinedVector<QueuedCommit*, 16>;
  // Followers sleep on one of these slots, never on their own QueuedCommit:
  // a member may return (and free its append) as soon as it sees kDone, so
  // the leader must not touch the append after setting it. Collisions only
  // cause spurious wake-ups.
  static constexpr size_t kWakeSlots = 64;

  bool Enqueue(QueuedCommit& append);  // True if `append` leads at once.
  bool EnqueueLocked(QueuedCommit& append);  // The same, with mu_ held.
  State AwaitTurn(QueuedCommit& append);
  void Linger(std::unique_lock<std::mutex>& lock);
  absl::Status Lead(QueuedCommit& append);
  // Commits a prefix of the queue; returns it, with the queue lock held again.
  Group CommitFront(std::unique_lock<std::mutex>& lock, absl::Status& status);
  // Whether the committer thread, rather than the member at the queue's
  // front, commits next after the last commit.
  bool CommitterTakesFront() const;
  // Gives the queue's front to the committer thread; true if it must be
  // woken (it was idle).
  bool ActivateCommitter();
  void Complete(absl::Span<QueuedCommit* const> group, const QueuedCommit* self,
                const absl::Status& status);
  void SetState(QueuedCommit& member, State state);
  void RunCommitter();

  const size_t max_group_bytes_;
  const CommitFn commit_;
  std::array<WakeSlot, kWakeSlots> wake_{};

  // A plain mutex: it is held for a few pointer operations only, never
  // during a commit.
  mutable std::mutex mu_;
  std::condition_variable linger_cv_;
  std::deque<QueuedCommit*> queue_ ABSL_GUARDED_BY(mu_);
  size_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  size_t next_slot_ ABSL_GUARDED_BY(mu_) = 0;
  // Size of the last group minus members queued since.
  size_t returning_ ABSL_GUARDED_BY(mu_) = 0;
  bool lingering_ ABSL_GUARDED_BY(mu_) = false;
  Duration last_commit_ ABSL_GUARDED_BY(mu_){};
  // The committer thread owns the queue's front.
  bool committer_active_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::condition_variable committer_cv_;
  std::thread committer_;  // Sleeps until a hand-over to it.
};

}  // namespace keel

#endif  // KEEL_CORE_GROUP_COMMIT_H_
