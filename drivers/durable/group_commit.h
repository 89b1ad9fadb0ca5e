// GroupCommitter: coalesces concurrent publishes into one store write.
//
// LevelDB's writer queue: every publisher enqueues its PendingAppend; the one
// at the front becomes the leader, takes every queued append (up to a byte
// budget) into one group, runs the commit function once for the group
// without holding the queue lock, and hands the result to each member. A
// lone publisher is its own leader at once, so grouping never adds latency;
// under load, one store write (and one fsync) serves many publishers.
//
// Thread safety: Submit is called from any number of threads; the commit
// function is never run concurrently with itself.
#ifndef KEEL_DRIVERS_DURABLE_GROUP_COMMIT_H_
#define KEEL_DRIVERS_DURABLE_GROUP_COMMIT_H_

#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/mutex.h"
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
  bool done = false;
  CondVar turn;
};

class GroupCommitter {
 public:
  using CommitFn = std::function<absl::Status(absl::Span<PendingAppend* const> group)>;

  GroupCommitter(size_t max_group_bytes, CommitFn commit)
      : max_group_bytes_(max_group_bytes), commit_(std::move(commit)) {}

  // Blocks until `append`'s group is committed; returns the group's status.
  absl::Status Submit(PendingAppend& append);

  // Appends waiting or being committed (for tests and metrics).
  size_t queued() const;

 private:
  const size_t max_group_bytes_;
  const CommitFn commit_;
  mutable Mutex mu_;
  std::deque<PendingAppend*> queue_ ABSL_GUARDED_BY(mu_);
};

}  // namespace keel::durable

#endif  // KEEL_DRIVERS_DURABLE_GROUP_COMMIT_H_
