// EventBus: publish events to named streams and follow them.
//
// A driver (memory, durable, ...) implements EventBus; drivers that can read
// history also implement Replayer, reachable through replayer(). Publish
// assigns gap-free per-stream sequences, returns only after the event is
// persisted by the driver, and fans out to subscribers after that. A batch
// to one stream is all-or-nothing: either every event gets consecutive
// sequences or none does and no sequence is consumed.
//
// Close stops new publishes (kClosed), waits for in-flight publishes, then
// ends every subscription; readers drain queued events before seeing kClosed.
//
// Thread safety: every method is safe to call concurrently.
#ifndef KEEL_CORE_EVENT_BUS_H_
#define KEEL_CORE_EVENT_BUS_H_

#include <memory>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/cursor.h"
#include "core/event.h"
#include "core/replayer.h"
#include "core/subscription.h"

namespace keel {

struct Receipt {
  std::string stream;
  uint64_t sequence = 0;
  Cursor cursor;
  std::string id;
  bool duplicate = false;  // An idempotent retry that appended nothing.
};

class EventBus {
 public:
  virtual ~EventBus() = default;

  virtual absl::StatusOr<Receipt> Publish(Event event) = 0;
  // All events must name `stream` (or leave it empty).
  virtual absl::StatusOr<std::vector<Receipt>> PublishBatch(absl::string_view stream,
                                                            std::vector<Event> events) = 0;

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
