// The jetstream driver: an EventBus whose streams live in a NATS JetStream
// stream, shared by every daemon that opens the same bus
// (rfcs/0007-jetstream.md).
//
// It is an engine that sequences on its server (core/driver_base.h), not a
// StreamLog: another daemon may append to the same stream at any time, so
// there is no local commit point. Instead each Keel stream is a subject of
// the bus's JetStream stream (drivers/jetstream/bus_layout.h) holding its
// records (drivers/jetstream/record.h); an append is a conditional publish
// of the next record (drivers/jetstream/stream_writer.h), and subscribers
// are fed from the server's ordered republication of stored records
// (drivers/jetstream/live_feed.h), never from this daemon's own publishes.
//
// A publish returns after JetStream acknowledged the record (after quorum
// replication at replicas > 1; JetStream 2.9 writes it to disk on its own
// schedule) and after the feed delivered it to this daemon's subscribers
// (or a few seconds passed).
//
// Thread safety: the bus is fully thread-safe.
#ifndef KEEL_DRIVERS_JETSTREAM_JETSTREAM_BUS_H_
#define KEEL_DRIVERS_JETSTREAM_JETSTREAM_BUS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "keel/core/driver_factory.h"
#include "keel/core/event_bus.h"
#include "keel/drivers/jetstream/jetstream_options.h"

namespace keel::jetstream {

// Connects, creates the bus's JetStream stream when it does not exist (or
// checks that the existing one is laid out for Keel), and starts the live
// feed. kUnavailable when the servers cannot be reached or JetStream has no
// quorum; kFailedPrecondition for a stream of that name laid out otherwise.
absl::StatusOr<std::unique_ptr<EventBus>> OpenJetStreamBus(const JetStreamOptions& options,
                                                           const DriverContext& context);

}  // namespace keel::jetstream

#endif  // KEEL_DRIVERS_JETSTREAM_JETSTREAM_BUS_H_
