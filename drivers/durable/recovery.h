// Recovery: rebuilds the durable driver's in-memory state when it opens a
// store, reading only the meta record and the head records (one sequential
// scan of the "H" range), never the entries, so that opening costs the same
// whatever the number of events.
//
// Recover reads (or creates) the store meta record with the store's epoch
// and format, then every head record and every epoch start; a record that
// does not decode fails the open with kDataLoss naming the key. Checking each head against its
// stream's last entry (VerifyTail) is left to the bus, which does it lazily
// per stream (tail_verifier.h). Nothing silently restarts a counter at 0.
//
// Thread safety: Recover runs before the bus serves anything; VerifyTail
// may run concurrently for different streams.
#ifndef KEEL_DRIVERS_DURABLE_RECOVERY_H_
#define KEEL_DRIVERS_DURABLE_RECOVERY_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "keel/core/logger.h"
#include "keel/drivers/durable/epoch_history.h"
#include "keel/drivers/durable/key_layout.h"
#include "keel/statestore/state_store.h"

namespace keel::durable {

struct RecoveredState {
  StoreMeta meta;
  absl::flat_hash_map<std::string, Head> heads;  // Not yet checked against entries.
  // Deleted streams' incarnation records (key_layout.h, IncarnationKey).
  absl::flat_hash_map<std::string, uint64_t> incarnations;
  EpochStarts epoch_starts;
};

absl::StatusOr<RecoveredState> Recover(StateStore& store);

// How many earlier epochs a store keeps. When a new epoch would exceed it,
// the oldest is forgotten with its epoch starts: its cursors then read as
// of another store (kCursorMismatch).
inline constexpr size_t kMaxEarlierEpochs = 64;

// Starts a new epoch (epoch_history.h) in `state` and stages its records
// in `batch`: after an open that found that the last process crashed while
// acknowledging unsynced writes, whose lost sequences the next publishes
// will give again. The meta record gets the new epoch and the old one
// appended to the earlier ones (forgetting the oldest past
// kMaxEarlierEpochs, its starts folded into each stream's floor). The
// caller writes `batch` synced before anything is served, or fails the open.
void StageNewEpoch(RecoveredState& state, WriteBatch& batch);

// The OpenMarker the last process left when it did not close the store
// (one that does not decode reads as `acks_synced` false), nullopt after a
// clean close or in a new store.
absl::StatusOr<std::optional<OpenMarker>> ReadOpenMarker(StateStore& store);

// Stages this process's OpenMarker, to be written synced at open so that a
// crash from now on is found at the next open; it keeps `acks_synced`
// false and `lost` true if `previous` left them so, and sets `lost` when
// this open found a loss (`lost_now`, MayHaveLostAcknowledgedWrites).
// `lifetime` is the store's UnsyncedWritesLifetime().
void StageOpenMarker(bool acks_synced, absl::string_view lifetime,
                     const std::optional<OpenMarker>& previous, bool lost_now, WriteBatch& batch);

// Whether the process that left `previous` may have lost events it
// acknowledged: it acknowledged unsynced writes, and the store cannot say
// that they outlived it (its unsynced writes' lifetime, now `lifetime`, is
// unknown or not the one that process opened it in). Such an open starts a
// new epoch (StageNewEpoch).
bool MayHaveLostAcknowledgedWrites(const OpenMarker& previous, absl::string_view lifetime);

// Says that the store was not closed cleanly, and what that may have cost
// given how the last process acknowledged (`previous`) and whether this
// open found a loss (`lost_now`, MayHaveLostAcknowledgedWrites).
std::string UncleanOpenMessage(const OpenMarker& previous, bool lost_now);

// What VerifyTail found after a stream's head.
struct TailRepair {
  bool caught_up = false;  // `head` now covers entries it did not.
  // Entries that followed a hole (see VerifyTail), deleted by `batch`.
  uint64_t first_dropped = 0;
  uint64_t last_dropped = 0;
  uint64_t dropped = 0;
  WriteBatch batch;
  // Whether the caller has a head and `batch` to write.
  bool changed() const { return caught_up || dropped > 0; }
};

// Checks `head` against the last entry of `stream`, decoding that entry. A
// head that lags its entries is caught up in `head` over the entries that
// continue it without a hole. Entries after a hole (an unsynced crash lost
// writes before them and kept later ones: nothing orders unsynced LevelDB
// log blocks) are dropped with their idempotency records, as Kafka
// truncates a log at its first bad record: a stream's entries stay
// consecutive, so no reader skips the lost ones silently. The caller writes
// `head` and the repair's batch together. kDataLoss naming the key when an
// entry read does not decode (dropped or not) or the head claims entries
// that do not exist.
absl::StatusOr<TailRepair> VerifyTail(StateStore& store, StoreFormat format,
                                      absl::string_view stream, Head& head);

// Writes a changed repair: `head` and the repair's deletes, in one synced
// write.
absl::Status WriteRepair(StateStore& store, absl::string_view stream, TailRepair& repair,
                         const Head& head);

// Warns of the entries `repair` dropped, if any (`head`: the repaired head).
void LogDropped(Logger& logger, absl::string_view stream, const TailRepair& repair,
                const Head& head);

}  // namespace keel::durable

#endif  // KEEL_DRIVERS_DURABLE_RECOVERY_H_
