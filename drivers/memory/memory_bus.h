// The `memory` driver: a bounded in-memory ring per stream.
//
// Each stream keeps its newest events up to `max_events` and `max_bytes`
// (options "max_events_per_stream", default 100000, and
// "max_bytes_per_stream", default 64 MiB); older events are evicted and a
// cursor older than the ring gets a retention-gap error. Sequences are
// gap-free from 1. Nothing survives the process: each instance has a fresh
// random epoch, so cursors from an earlier instance are detected as
// mismatches. Used for tests, ephemeral buses, and as the durable driver's
// degraded mode.
//
// Thread safety: fully thread-safe; one mutex per stream plus one for the
// stream table.
#ifndef KEEL_DRIVERS_MEMORY_MEMORY_BUS_H_
#define KEEL_DRIVERS_MEMORY_MEMORY_BUS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "keel/core/config.h"
#include "keel/core/driver_factory.h"
#include "keel/core/event_bus.h"

namespace keel {

struct MemoryRingLimits {
  uint64_t max_events_per_stream = 100'000;
  uint64_t max_bytes_per_stream = 64ull << 20;
};

// Reads MemoryRingLimits from `config`; kInvalidArgument on bad values.
absl::StatusOr<MemoryRingLimits> MemoryRingLimitsFromConfig(const Config& config);

std::unique_ptr<EventBus> NewMemoryBus(const MemoryRingLimits& limits,
                                       const DriverContext& context);

}  // namespace keel

#endif  // KEEL_DRIVERS_MEMORY_MEMORY_BUS_H_
