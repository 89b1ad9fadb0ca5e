// GroupCommitter: coalesces concurrent publishes into one store write.
//
// LevelDB's writer queue: every publisher enqueues its PendingAppend; the one
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
// Waiting: followers block on an atomic word (a futex), not a condition
// variable, and the leader wakes its group after releasing the queue lock:
// with tens of publishers per commit, each hand-off was several futex calls
// under a contended lock (BENCHMARKS.md, "sync").
//
// Asynchronous members and the committer thread: SubmitAsync queues an
// append that has no thread waiting for it; its `done` is called with the
// group's status once committed. Such appends are committed by a committer
// thread (sleeping until needed), which also takes over from a leader after
// a slow commit while others are queued: it then commits group after group
// without the hand-off to a woken member between them, and stops when the
// queue is empty or a fast commit can hand over to a waiting member. An I/O
// thread can so publish without blocking, and without the context switches
// of a waiting thread per publish (BENCHMARKS.md, "sync=always"). The
// committer thread does not linger, so lingering applies only to groups a
// waiting member leads.
//
// Thread safety: Submit and SubmitAsync are called from any number of
// threads; the commit function is never run concurrently with itself (an
// exception from it is the group's status). `done` runs on the committer
// thread or the leader's and must neither block, throw, nor destroy the
// committer.
#ifndef KEEL_DRIVERS_DURABLE_GROUP_COMMIT_H_
#define KEEL_DRIVERS_DURABLE_GROUP_COMMIT_H_

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

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/append_plan.h"
#include "core/event.h"
#include "drivers/durable/dedupe_index.h"
#include "drivers/durable/trim.h"

namespace keel::durable {

// One publish waiting for its group. The leader assigns sequences in
// `events` before committing. Maintenance (retention trims, collection of
// expired idempotency keys) rides the same queue instead of an append, so
// that it is ordered with publishes and constant traffic cannot starve it.
struct PendingAppend {
  absl::string_view stream;
  std::vector<Event>* events = nullptr;
  std::vector<std::string>* values = nullptr;  // Encoded entries, one per event.
  size_t bytes = 0;
  const AppendRequest* request = nullptr;
  std::vector<Receipt>* receipts = nullptr;  // Filled by the commit.

  const TrimPlan* trim = nullptr;           // Apply this plan to `stream`.
  DedupeCollection* collect = nullptr;      // Collect expired idempotency keys.
  size_t collect_budget = 0;
  bool checkpoint = false;                  // Write every head that lags (Close).

  // Set by the commit function when this member alone is refused (conflict,
  // a trim that lost a race); the member then wrote nothing.
  absl::Status rejected;

  // For SubmitAsync: called with the group's status; the last use of the
  // append by the committer (it may free the append).
  std::function<void(absl::Status)> done;

  // Owned by GroupCommitter.
  absl::Status status;
  std::atomic<uint32_t> state{0};  // GroupCommitter::State.
  size_t wake_slot = 0;
};

class GroupCommitter {
 public:
  using CommitFn = std::function<absl::Status(absl::Span<PendingAppend* const> group)>;
  using Duration = std::chrono::steady_clock::duration;

  static constexpr Duration kLingerThreshold = std::chrono::microseconds(50);
  static constexpr Duration kMaxLinger = std::chrono::milliseconds(2);

  GroupCommitter(size_t max_group_bytes, CommitFn commit);
  // Stops the committer thread; nothing may be queued any more.
  ~GroupCommitter();

  // Blocks until `append`'s group is committed; returns the group's status.
  absl::Status Submit(PendingAppend& append);
  // Queues `append` (with `done` set) and returns; `append` must live until
  // `done` is called.
  void SubmitAsync(PendingAppend& append);

  // Appends waiting or being committed (for tests and metrics).
  size_t queued() const;

 private:
  enum State : uint32_t { kWaiting = 0, kDone = 1, kLead = 2 };
  // Followers sleep on one of these words, never on their own PendingAppend:
  // a member may return (and free its append) as soon as it sees kDone, so
  // the leader must not touch the append after setting it. Collisions only
  // cause spurious wake-ups.
  static constexpr size_t kWakeSlots = 64;

  bool Enqueue(PendingAppend& append);  // True if `append` leads at once.
  bool EnqueueLocked(PendingAppend& append);  // The same, with mu_ held.
  State AwaitTurn(PendingAppend& append);
  void Linger(std::unique_lock<std::mutex>& lock);
  absl::Status Lead(PendingAppend& append);
  // Commits a prefix of the queue; returns it, with the queue lock held again.
  std::vector<PendingAppend*> CommitFront(std::unique_lock<std::mutex>& lock, absl::Status& status);
  // Whether the committer thread, rather than the member at the queue's
  // front, commits next after the last commit.
  bool CommitterTakesFront() const;
  // Gives the queue's front to the committer thread; true if it must be
  // woken (it was idle).
  bool ActivateCommitter();
  void Complete(absl::Span<PendingAppend* const> group, const PendingAppend* self,
                const absl::Status& status);
  void SetState(PendingAppend& member, State state);
  void RunCommitter();

  const size_t max_group_bytes_;
  const CommitFn commit_;
  std::array<std::atomic<uint32_t>, kWakeSlots> wake_{};

  // Guards the fields below; a plain mutex: it is held for a few pointer
  // operations only, never during a commit.
  mutable std::mutex mu_;
  std::condition_variable linger_cv_;
  std::deque<PendingAppend*> queue_;
  size_t queued_bytes_ = 0;
  size_t next_slot_ = 0;
  size_t returning_ = 0;  // Size of the last group minus appends queued since.
  bool lingering_ = false;
  Duration last_commit_{};
  bool committer_active_ = false;  // The committer thread owns the queue's front.
  bool stopping_ = false;
  std::condition_variable committer_cv_;
  std::thread committer_;  // Sleeps until a hand-over to it.
};

}  // namespace keel::durable

#endif  // KEEL_DRIVERS_DURABLE_GROUP_COMMIT_H_
