// Recovery: rebuilds the durable driver's in-memory state when it opens a
// store, in O(streams) reads, not O(events).
//
// It reads (or creates) the store meta record with the store's epoch, then
// every head record. Each head is checked against the last entry of its
// stream: a head that lags behind its entries is repaired (and the repair
// is logged); a head that claims entries that do not exist, or any record
// that does not decode, fails the open with kDataLoss naming the key. It
// never silently restarts a counter at 0.
//
// Thread safety: runs before the bus serves anything; not concurrent.
#ifndef KEEL_DRIVERS_DURABLE_RECOVERY_H_
#define KEEL_DRIVERS_DURABLE_RECOVERY_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "core/logger.h"
#include "drivers/durable/key_layout.h"
#include "statestore/state_store.h"

namespace keel::durable {

struct RecoveredState {
  uint64_t epoch = 0;
  absl::flat_hash_map<std::string, Head> heads;
  std::vector<std::string> repaired_streams;
};

absl::StatusOr<RecoveredState> Recover(StateStore& store, Logger& logger);

}  // namespace keel::durable

#endif  // KEEL_DRIVERS_DURABLE_RECOVERY_H_
