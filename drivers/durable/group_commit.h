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
// has passed — before it takes its group. Without it, the members of group k come back during commit k+1 and
// groups alternate between few and many members. A publisher that publishes
// alone never lingers: it is the only member of the previous group, so it is
// back as soon as it queues. Fast commits (no fsync) never linger.
//
// Waiting: followers block on an atomic word (a futex), not a condition
// variable, and the leader wakes its group after releasing the queue lock:
// with tens of publishers per commit, each hand-off was several futex calls
// under a contended lock (BENCHMARKS.md, "sync").
//
// Thread safety: Submit is called from any number of threads; the commit
// function is never run concurrently with itself.
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

  // Set by the commit function when this member alone is refused (conflict,
  // a trim that lost a race); the member then wrote nothing.
  absl::Status rejected;

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

  GroupCommitter(size_t max_group_bytes, CommitFn commit)
      : max_group_bytes_(max_group_bytes), commit_(std::move(commit)) {}

  // Blocks until `append`'s group is committed; returns the group's status.
  absl::Status Submit(PendingAppend& append);

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
  State AwaitTurn(PendingAppend& append);
  void Linger(std::unique_lock<std::mutex>& lock);
  absl::Status Lead(PendingAppend& append);
  void SetState(PendingAppend& member, State state);

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
};

}  // namespace keel::durable

#endif  // KEEL_DRIVERS_DURABLE_GROUP_COMMIT_H_
