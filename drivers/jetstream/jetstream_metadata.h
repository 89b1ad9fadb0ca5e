// JetStreamMetadata: the bus's MetadataStore (declarations, consumer-group
// records) kept in JetStream, on the bus's metadata subjects
// (keel.<bus>.m.<key>, one subject per record), so that every daemon
// serving the bus shares them.
//
// Every write is conditional on the record this thread last read of the
// key (absent when it read none): a claim (drivers/jetstream/claim.h) of
// the slot after that record, rolling the older messages of the key up.
// Callers read a record, decide, and write it back under their own lock
// (core/group_coordinator.h, core/policy_registry.h), so the condition
// turns their read-modify-write into one across daemons: a write that
// another daemon's write overtook fails — kConflict, or kResourceDrift for
// a declaration ("policy/" keys) — instead of overwriting it. A lease
// granted on one daemon therefore fences a commit on another.
//
// A deleted record is a tombstone message (header Keel-Deleted).
//
// Thread safety: all methods are safe to call concurrently.
#ifndef KEEL_DRIVERS_JETSTREAM_JETSTREAM_METADATA_H_
#define KEEL_DRIVERS_JETSTREAM_JETSTREAM_METADATA_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "keel/core/metadata_store.h"
#include "keel/drivers/jetstream/bus_layout.h"
#include "keel/drivers/jetstream/claim.h"
#include "keel/drivers/jetstream/jetstream_api.h"

namespace keel::jetstream {

class JetStreamMetadata final : public MetadataStore {
 public:
  JetStreamMetadata(JetStreamApi& api, const BusLayout& layout, ClaimTimeouts timeouts);

  absl::StatusOr<std::optional<std::string>> Get(absl::string_view key) override;
  absl::Status Put(absl::string_view key, absl::string_view value) override;
  absl::Status Delete(absl::string_view key) override;
  absl::StatusOr<std::vector<Record>> List(absl::string_view prefix) override;

 private:
  absl::Status Write(absl::string_view key, absl::string_view value, bool tombstone);
  // The JetStream sequence of the record of `key` this thread last read or
  // wrote; 0 when none (or when it read that there is none).
  uint64_t Seen(absl::string_view key) const;
  void See(absl::string_view key, uint64_t js_seq) const;

  JetStreamApi& api_;
  const BusLayout& layout_;
  const ClaimTimeouts timeouts_;
  const uint64_t instance_;  // Tells this store's entries apart in the thread-local table.
};

}  // namespace keel::jetstream

#endif  // KEEL_DRIVERS_JETSTREAM_JETSTREAM_METADATA_H_
