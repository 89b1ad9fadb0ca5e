// The `durable` driver: events persisted in a StateStore (LevelDB by default).
//
// Each event is one immutable entry record; each stream has one small head
// record, written with its first events and then at head checkpoints, never
// ahead of the entries (format: rfcs/0003-durable-layout.md). A publish
// returns only after its batch is in the store — and, with SyncMode::kAlways,
// on disk — and subscribers see an event only after that. Concurrent
// publishes are group-committed: one store write (and one fsync) for many
// publishers, with no added latency for a lone publisher. A failed write
// consumes no sequence number.
//
// Opening recovers the sequence counters from the head records alone
// (O(streams), nothing read from the entries). Each stream's head is then
// checked against its last entry lazily — before the first publish, replay,
// bounds or listing of that stream, or earlier by a background sweep —
// catching up a head that lags its entries and failing that stream's
// operations with kDataLoss, naming the key, when a record does not decode
// (drivers/durable/tail_verifier.h).
//
// Thread safety: fully thread-safe.
#ifndef KEEL_DRIVERS_DURABLE_DURABLE_BUS_H_
#define KEEL_DRIVERS_DURABLE_DURABLE_BUS_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "keel/core/config.h"
#include "keel/core/driver_factory.h"
#include "keel/core/event_bus.h"
#include "keel/core/tiered_storage.h"
#include "keel/statestore/state_store.h"

namespace keel {

class ColdStore;

// The steps of tiering and cold expiry (rfcs/0008-cold-segments.md), each
// once done; tests stop a pass after one to play a crash there.
enum class TierStep {
  kIntentWritten,  // The intent record is synced.
  kUploaded,       // The segment's object is in the cold store.
  kTiered,         // The live record replaced the intent; hot entries deleted.
  kExpiryMarked,   // Expired segments' records are retiring.
  kObjectDeleted,  // A retiring segment's object is deleted.
};

// Cold segments: where they go and how big they get.
struct ColdOptions {
  // Null: no cold tier; hot.* policy bounds are then not applied (a store
  // that already has cold segments refuses to open without one).
  std::shared_ptr<ColdStore> store;
  uint64_t segment_events = 4096;       // Entries per segment, at most.
  uint64_t segment_bytes = 8ull << 20;  // Stored bytes per segment, about.
  // An object no record names is deleted once found so for this long.
  absl::Duration orphan_grace = absl::Hours(1);
  absl::Duration orphan_sweep_interval = absl::Minutes(10);
  // Tests: called after each step; an error stops the pass there.
  std::function<absl::Status(TierStep step, absl::string_view stream)> fault;
};

enum class SyncMode {
  kAlways,    // Acknowledged means synced (one fsync per commit group).
  kInterval,  // Synced at most every `sync_interval`; a crash may lose that window.
  kNone,      // Left to the OS; a crash may lose recent events.
};

struct DurableOptions {
  SyncMode sync = SyncMode::kAlways;
  absl::Duration sync_interval = absl::Milliseconds(100);
  size_t max_group_bytes = 4 << 20;  // Upper bound of one group commit.
  // A commit writes the heads of new streams only, until this many bytes
  // have been committed since the last head checkpoint; then every head that
  // lags (and Close() writes them all). Bounds what recovery reads after a
  // crash to catch heads up; 0 writes every touched head in every commit.
  // Under kInterval and kNone a checkpoint first syncs the writes its heads
  // account for (one fsync), so 0 there syncs nearly every commit.
  uint64_t head_checkpoint_bytes = uint64_t{1} << 30;
  bool close_store = true;           // Close() also closes the store.
  // Verify every stream's tail in a background thread after open; when
  // false, a stream is verified only by the first operation on it.
  bool verify_in_background = true;
  ColdOptions cold;
};

// Parses "sync" (always|interval|none), "sync_interval", "max_group_bytes",
// "head_checkpoint_bytes", "cold_segment_events", "cold_segment_bytes" and
// "cold_orphan_grace" from `config` (ColdStoreFromConfig opens the cold
// store).
absl::StatusOr<DurableOptions> DurableOptionsFromConfig(const Config& config);

// The cold tier's figures of a bus with a cold tier (EventBus::tiers());
// nullopt for any other bus.
std::optional<ColdStats> ColdStatsOf(EventBus& bus);

// The cold store option "cold_store" names: "fs:<directory>", or "s3" with
// "cold_store.<option>" options (coldstore/s3/s3_cold_store.h), or any
// registered cold store by name with its "cold_store.*" options; null when
// absent.
absl::StatusOr<std::shared_ptr<ColdStore>> ColdStoreFromConfig(const Config& config);

// Opens a durable bus over `store`, recovering its state.
absl::StatusOr<std::unique_ptr<EventBus>> OpenDurableBus(std::shared_ptr<StateStore> store,
                                                         const DurableOptions& options,
                                                         const DriverContext& context);

}  // namespace keel

#endif  // KEEL_DRIVERS_DURABLE_DURABLE_BUS_H_
