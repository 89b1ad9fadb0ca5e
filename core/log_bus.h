// The storage engine: a whole EventBus over a StreamLog (core/stream_log.h),
// shared by every driver that stores events itself.
//
// A driver's factory opens its log and returns NewLogBus(log, context):
//
//   absl::StatusOr<std::unique_ptr<keel::EventBus>> Create(
//       const keel::Config& config, const keel::DriverContext& context) const override {
//     return keel::NewLogBus(std::make_unique<MyLog>(), context);
//   }
//
// The engine (on DriverBase: validation, drain on close, fan-out,
// declarations, consumer groups) queues every append, retention trim and
// key collection through one GroupCommitter (core/group_commit.h), so the
// log sees one mutation at a time. For each append, on the committing
// thread, it reads the stream's bounds, applies idempotency keys and the
// expected last sequence (core/append_plan.h), raises a publish time that
// would go back to its predecessor's, assigns the next sequences, and hands
// the whole group to StreamLog::Append in one call; after the log stored
// it, it delivers the events to subscribers in sequence order. A failed
// Append consumes no sequence. Replays resolve cursors against the log's
// bounds and read through StreamLog::Read; a hole in what the log returns
// is kDataLoss, never skipped. Trim plans cuts past the declared retention
// by reading the oldest events and applies them with TrimPrefix.
//
// Thread safety: the returned bus is fully thread-safe.
#ifndef KEEL_CORE_LOG_BUS_H_
#define KEEL_CORE_LOG_BUS_H_

#include <cstddef>
#include <memory>

#include "absl/status/statusor.h"
#include "keel/core/driver_factory.h"
#include "keel/core/event_bus.h"
#include "keel/core/stream_log.h"

namespace keel {

struct LogBusOptions {
  // Upper bound of the events' bytes in one group commit.
  size_t max_group_bytes = 4 << 20;
};

// Takes `log` over; fails only when its metadata store cannot be read.
absl::StatusOr<std::unique_ptr<EventBus>> NewLogBus(std::unique_ptr<StreamLog> log,
                                                    const DriverContext& context,
                                                    const LogBusOptions& options = {});

}  // namespace keel

#endif  // KEEL_CORE_LOG_BUS_H_
