// EventBus: publish events to named streams and follow them.
//
// A driver (memory, durable, ...) implements EventBus; drivers that can read
// history also implement Replayer, reachable through replayer(). Publish
// assigns gap-free per-stream sequences, returns only after the event is
// persisted by the driver, and fans out to subscribers after that. A batch
// to one stream is all-or-nothing: either every event gets consecutive
// sequences or none does and no sequence is consumed.
//
// Streams can be declared with a StreamPolicy (retention, payload limit,
// idempotency window, partitions); undeclared streams get the bus's default
// policy. A publish whose event carries an idempotency key already seen on
// the stream within the policy's dedupe window appends nothing and returns
// the original receipt with `duplicate` set; a batch is deduplicated per
// event. PublishOptions::expected_last_sequence makes the append conditional
// on the stream's last sequence (kConflict with the actual one otherwise).
//
// Close stops new publishes (kClosed), waits for in-flight publishes, then
// ends every subscription; readers drain queued events before seeing kClosed.
//
// Thread safety: every method is safe to call concurrently.
#ifndef KEEL_CORE_EVENT_BUS_H_
#define KEEL_CORE_EVENT_BUS_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/core/collections.h"
#include "keel/core/consumer_groups.h"
#include "keel/core/cursor.h"
#include "keel/core/event.h"
#include "keel/core/replayer.h"
#include "keel/core/stream_policy.h"
#include "keel/core/subscription.h"
#include "keel/core/tiered_storage.h"

namespace keel {

struct Receipt {
  std::string stream;
  uint64_t sequence = 0;
  Cursor cursor;
  std::string id;
  bool duplicate = false;  // An idempotent retry that appended nothing.
};

struct PublishOptions {
  // Append only if the stream's last sequence (0 for an empty stream) equals
  // this; otherwise kConflict carrying the actual value (GetConflict). Events
  // that are idempotent duplicates are answered before the check.
  std::optional<uint64_t> expected_last_sequence;
};

// What one DeleteStream call removed.
struct DeletionReport {
  std::vector<std::string> streams;  // Every stream deleted, sorted.
  uint64_t events = 0;               // Their retained events.
  uint64_t groups = 0;               // Consumer groups deleted with them.
};

// What one Trim call removed.
struct TrimReport {
  uint64_t events = 0;       // Entries deleted past a retention bound.
  uint64_t bytes = 0;        // Their Event::ApproximateSize.
  uint64_t dedupe_keys = 0;  // Expired idempotency keys collected.
  bool more = false;         // Work remains: call again.
};

class EventBus {
 public:
  virtual ~EventBus() = default;

  virtual absl::StatusOr<Receipt> Publish(Event event, const PublishOptions& options) = 0;
  absl::StatusOr<Receipt> Publish(Event event) { return Publish(std::move(event), {}); }
  // All events must name `stream` (or leave it empty).
  virtual absl::StatusOr<std::vector<Receipt>> PublishBatch(absl::string_view stream,
                                                            std::vector<Event> events,
                                                            const PublishOptions& options) = 0;
  absl::StatusOr<std::vector<Receipt>> PublishBatch(absl::string_view stream,
                                                    std::vector<Event> events) {
    return PublishBatch(stream, std::move(events), {});
  }
  // PublishBatch answered through `done`, called once with what PublishBatch
  // would return, on any thread; it must not block. When PublishesAsync(),
  // the call returns without waiting for the store (a server's I/O thread
  // may make it); the default
  // calls PublishBatch, which may block, then `done`.
  using PublishDone = std::function<void(absl::StatusOr<std::vector<Receipt>>)>;
  virtual void PublishBatchAsync(absl::string_view stream, std::vector<Event> events,
                                 const PublishOptions& options, PublishDone done);
  virtual bool PublishesAsync() const { return false; }

  // Declares `stream` (or, with partitions, a topic). Declaring identical
  // settings again is a no-op; different settings fail with kResourceDrift
  // naming the differing fields. Declarations last as long as the bus's data.
  virtual absl::Status Declare(absl::string_view stream, const StreamPolicy& policy);
  // The policy in force for `stream`: its declaration, its topic's, or the
  // bus default.
  virtual absl::StatusOr<StreamPolicy> PolicyOf(absl::string_view stream);
  // Every declaration, sorted by stream.
  virtual absl::StatusOr<std::vector<StreamDeclaration>> Declarations();

  // Removes events past their stream's retention bounds and expired
  // idempotency keys, at most about `budget` records per call.
  virtual absl::StatusOr<TrimReport> Trim(size_t budget);
  // Cheap (no I/O): true when some stream may be over a retention bound or
  // idempotency keys may have expired, i.e. when Trim has work.
  virtual bool NeedsTrim() const { return false; }

  // Removes `stream` for good: its events, idempotency keys, consumer
  // groups and declaration, and the same of its dead-letter stream; for a
  // topic declared with partitions, of every partition too. Crash-safe: a
  // deletion a crash interrupted is finished when the bus opens again. A
  // stream published to afterwards is a new incarnation, whose sequences go
  // on after the deleted one's (StreamInfo::incarnation_start): cursors of the deleted
  // one are kCursorMismatch, never positions in the new one. kNotFound when
  // the bus has nothing of `stream`; kUnimplemented when the driver cannot
  // delete streams.
  virtual absl::StatusOr<DeletionReport> DeleteStream(absl::string_view stream);

  // nullptr when the driver keeps no consumer groups.
  virtual ConsumerGroups* groups() { return nullptr; }

  // nullptr unless the bus moves old events to a cold tier.
  virtual TieredStorage* tiers() { return nullptr; }

  // nullptr unless the driver stores documents atomically with events.
  virtual Collections* collections() { return nullptr; }

  virtual absl::StatusOr<std::unique_ptr<Subscription>> Subscribe(
      const SubscribeOptions& options) = 0;

  // Follow: replay after `after`, then live.
  absl::StatusOr<std::unique_ptr<Subscription>> Follow(absl::string_view stream,
                                                       const Position& after) {
    SubscribeOptions options;
    options.stream = std::string(stream);
    options.after = after;
    return Subscribe(options);
  }

  // nullptr when the driver keeps no history.
  virtual Replayer* replayer() = 0;

  // Non-empty while the bus runs degraded (e.g. a durable driver without a
  // store, running on the memory ring): says what is degraded and why.
  virtual std::string DegradedReason() const { return ""; }

  // Idempotent. Returns kUnavailable if in-flight work did not finish in time.
  virtual absl::Status Close(absl::Duration drain_timeout = absl::Seconds(10)) = 0;
};

}  // namespace keel

#endif  // KEEL_CORE_EVENT_BUS_H_
