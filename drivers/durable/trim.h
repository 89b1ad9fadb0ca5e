// Retention trimming for the durable driver: which oldest entries of a
// stream to delete so that it is back within its RetentionLimits.
//
// PlanTrim reads entries from the head's first sequence (entries are
// immutable, so it needs no lock) and decides how far the first sequence
// moves; the committer then applies the plan with ApplyTrim, which stages
// the deletes and moves the staged head (the commit writes that head with
// them), after checking that the head's first sequence is still the one
// planned from.
//
// Thread safety: PlanTrim may run anywhere; ApplyTrim on the committer.
#ifndef KEEL_DRIVERS_DURABLE_TRIM_H_
#define KEEL_DRIVERS_DURABLE_TRIM_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/core/stream_policy.h"
#include "keel/drivers/durable/key_layout.h"
#include "keel/statestore/state_store.h"

namespace keel::durable {

struct TrimPlan {
  uint64_t from = 0;      // The head's first sequence when planned.
  uint64_t new_first = 0; // Entries [from, new_first) go.
  uint64_t bytes = 0;     // Their Event::ApproximateSize.
  absl::Time new_oldest = absl::InfinitePast();  // Time of entry new_first.

  uint64_t events() const { return new_first - from; }
};

// At most `budget` entries. An empty plan (events() == 0) when within bounds.
absl::StatusOr<TrimPlan> PlanTrim(StateStore& store, StoreFormat format,
                                  absl::string_view stream, const Head& head,
                                  const RetentionLimits& limits, absl::Time now, uint64_t budget);

// Stages the plan's deletes into `batch` and updates `head`, which the
// caller writes in the same batch; kAborted when the head's
// first sequence moved since planning (another trim won; plan again).
absl::Status ApplyTrim(StateStore& store, StoreFormat format, WriteBatch& batch,
                       absl::string_view stream, const TrimPlan& plan, Head& head);

}  // namespace keel::durable

#endif  // KEEL_DRIVERS_DURABLE_TRIM_H_
