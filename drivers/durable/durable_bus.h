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

#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "keel/core/config.h"
#include "keel/core/driver_factory.h"
#include "keel/core/event_bus.h"
#include "keel/statestore/state_store.h"

namespace keel {

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
};

// Parses "sync" (always|interval|none), "sync_interval", "max_group_bytes"
// and "head_checkpoint_bytes" from `config`.
absl::StatusOr<DurableOptions> DurableOptionsFromConfig(const Config& config);

// Opens a durable bus over `store`, recovering its state.
absl::StatusOr<std::unique_ptr<EventBus>> OpenDurableBus(std::shared_ptr<StateStore> store,
                                                         const DurableOptions& options,
                                                         const DriverContext& context);

}  // namespace keel

#endif  // KEEL_DRIVERS_DURABLE_DURABLE_BUS_H_
