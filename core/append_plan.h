// AppendPlan: the idempotency and optimistic-concurrency rules of a publish,
// shared by every driver so that all of them answer alike.
//
// A driver calls PlanAppend at its serialization point for the stream (the
// ring lock, the commit leader), where the stream's last sequence cannot
// move, with a lookup into its idempotency index. The plan says which events
// to append and which are duplicates: of an event appended earlier within
// the window, or of an earlier event of the same batch. The expected last
// sequence is checked only when something is to be appended, so a retried
// conditional publish gets its original receipts, not a conflict.
//
// Thread safety: pure functions.
#ifndef KEEL_CORE_APPEND_PLAN_H_
#define KEEL_CORE_APPEND_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "keel/core/commit_hook.h"
#include "keel/core/event.h"
#include "keel/core/event_bus.h"

namespace keel {

// What a driver's Append is asked to honour besides storing the events.
struct AppendRequest {
  std::optional<uint64_t> expected_last_sequence;
  // Idempotency keys are remembered this long; zero disables dedupe.
  absl::Duration dedupe_window = absl::ZeroDuration();
  // Called at the commit point (a collection's write); not owned.
  CommitHook* hook = nullptr;
};

// The event an idempotency key was first published with.
struct DedupeHit {
  uint64_t sequence = 0;
  std::string id;
};

using DedupeLookup = absl::FunctionRef<std::optional<DedupeHit>(absl::string_view key)>;

// Inline room for one event: a single-event publish plans without
// allocating.
struct AppendPlan {
  // Per event: set when the event is a duplicate of an earlier publish.
  absl::InlinedVector<std::optional<DedupeHit>, 1> earlier;
  // Per event: set when it repeats the key of an earlier event of the batch.
  absl::InlinedVector<std::optional<size_t>, 1> same_batch;
  // Indexes of the events to append, in order.
  absl::InlinedVector<size_t, 1> append;
};

// kConflict (with ConflictInfo) when events are to be appended and
// `request.expected_last_sequence` differs from `last_sequence`.
absl::StatusOr<AppendPlan> PlanAppend(absl::Span<const Event> events, const AppendRequest& request,
                                      uint64_t last_sequence, DedupeLookup lookup);

// The receipts of a planned batch once the appended events (at their
// indexes in `events`) carry their sequences.
std::vector<Receipt> PlannedReceipts(const AppendPlan& plan, absl::Span<const Event> events,
                                     absl::string_view stream, uint64_t epoch);
// The same, each receipt handed to `take` in order (into a container that
// need not allocate).
void ForEachPlannedReceipt(const AppendPlan& plan, absl::Span<const Event> events,
                           absl::string_view stream, uint64_t epoch,
                           absl::FunctionRef<void(Receipt)> take);

}  // namespace keel

#endif  // KEEL_CORE_APPEND_PLAN_H_
