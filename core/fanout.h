// FanOut: delivers persisted events to the subscribers of each stream.
//
// Drivers own one FanOut. After a batch is persisted the driver calls
// Deliver(stream, events) — for each stream in sequence order and never
// concurrently for the same stream. FanOut implements every subscription
// behaviour of core/subscription.h (bounded queues, overflow policies,
// follow-from-a-cursor through the driver's Replayer), so drivers only store
// and read.
//
// Closing: CloseAll() ends every subscription after its queued events;
// Detach() additionally waits for in-flight catch-up reads and forbids new
// ones, and must be called before the Replayer is destroyed (the destructor
// does both).
//
// Thread safety: all methods are safe to call concurrently.
#ifndef KEEL_CORE_FANOUT_H_
#define KEEL_CORE_FANOUT_H_

#include <memory>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/clock.h"
#include "core/subscription.h"

namespace keel {

class FanOutHub;

class FanOut {
 public:
  // `replayer` may be null when the driver keeps no history; subscriptions
  // then start at `latest` and kCatchUp degrades to kDropOldest.
  FanOut(Replayer* replayer, Clock* clock);
  ~FanOut();
  FanOut(const FanOut&) = delete;
  FanOut& operator=(const FanOut&) = delete;

  absl::StatusOr<std::unique_ptr<Subscription>> Subscribe(const SubscribeOptions& options);

  void Deliver(absl::string_view stream, absl::Span<const EventPtr> events);
  // Convenience: wraps each event into an EventPtr first.
  void Deliver(absl::string_view stream, absl::Span<const Event> events);

  // True when someone subscribes to `stream` (drivers may skip building
  // EventPtrs otherwise).
  bool HasSubscribers(absl::string_view stream) const;

  void CloseAll();
  void Detach();

 private:
  std::shared_ptr<FanOutHub> hub_;
};

}  // namespace keel

#endif  // KEEL_CORE_FANOUT_H_
