// TieredStorage: the optional capability of a bus that keeps each stream's
// newest events hot (in its store) and moves older ones to a cold tier
// (immutable segments in a cold store, rfcs/0008-cold-segments.md).
// EventBus::tiers() reaches it, null for a bus without a cold tier, so that
// the daemon can show where a stream's events are and count the tier's work
// without knowing which driver keeps them.
//
// Thread safety: every method is safe to call concurrently, and with
// publishes and trims.
#ifndef KEEL_CORE_TIERED_STORAGE_H_
#define KEEL_CORE_TIERED_STORAGE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace keel {

// Where one stream's retained events are. The stream's bounds
// (Replayer::Bounds) cover both tiers; cold events are older than hot ones.
struct StreamTiers {
  // The oldest hot event; last_sequence + 1 when no event is hot.
  uint64_t hot_first_sequence = 1;
  // The oldest cold event; 0 when none is cold.
  uint64_t cold_first_sequence = 0;
  uint64_t cold_segments = 0;
  uint64_t cold_bytes = 0;  // Bytes of the segments' objects in the cold store.

  bool has_cold() const { return cold_segments > 0; }
};

// What the cold tier did since open, and holds.
struct ColdStats {
  uint64_t segments = 0;         // Live segments.
  uint64_t object_bytes = 0;     // Their objects' bytes.
  uint64_t uploads = 0;          // Segments uploaded and made live.
  uint64_t upload_failures = 0;  // Uploads the cold store refused or failed.
  uint64_t cold_reads = 0;       // Segment reads.
  uint64_t expired_segments = 0;
  bool paused = false;  // The cold store is failing: tiering waits.
};

class TieredStorage {
 public:
  virtual ~TieredStorage() = default;

  // Errors as Replayer::Bounds (a bad name, a stream whose records do not
  // decode).
  virtual absl::StatusOr<StreamTiers> TiersOf(absl::string_view stream) = 0;
  virtual ColdStats Stats() const = 0;
};

}  // namespace keel

#endif  // KEEL_CORE_TIERED_STORAGE_H_
