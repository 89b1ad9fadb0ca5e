// FanOut: delivers persisted events to the subscribers of each stream.
//
// Drivers own one FanOut. After a batch is persisted the driver calls
// Deliver(stream, events) — for each stream in sequence order and never
// concurrently for the same stream. FanOut implements every subscription
// behaviour of core/subscription.h (bounded queues, overflow policies,
// follow-from-a-cursor through the driver's Replayer), so drivers only store
// and read.
//
// Delivery: a stream with few subscribers is offered on the calling thread,
// before Deliver returns. A stream with more than
// `FanOutOptions::inline_subscribers` is handed to the FanOut's delivery
// thread (core/fanout_dispatcher.h), so that a publish costs O(batch) however
// many subscribers there are; its subscribers may then see an event after
// the publish returned. Either way a stream is offered in sequence order,
// and only events the driver already stored.
//
// A subscriber that overflowed its queue catches up from the stream's recent
// tail, shared by all its subscribers, and reads the Replayer only when it is
// further behind than that.
//
// Closing: CloseAll() first offers everything handed to the delivery thread,
// then ends every subscription after its queued events;
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
#include "keel/core/clock.h"
#include "keel/core/subscription.h"

namespace keel {

class FanOutDispatcher;
class FanOutHub;

struct FanOutOptions {
  // Streams with more subscribers than this are offered on the delivery
  // thread; 0 hands every delivery there.
  size_t inline_subscribers = 32;
  // Events waiting for the delivery thread before Deliver waits for room.
  size_t max_backlog = 1 << 16;
  // Recent events kept per stream with subscribers, from which a subscriber
  // that overflowed its queue catches up before it reads the Replayer
  // (core/fanout_tail.h); 0 sends every catch-up to the Replayer.
  size_t tail_events = 4096;
};

class FanOut {
 public:
  // `replayer` may be null when the driver keeps no history; subscriptions
  // then start at `latest` and kCatchUp degrades to kDropOldest.
  FanOut(Replayer* replayer, Clock* clock, FanOutOptions options = {});
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
  const FanOutOptions options_;
  std::shared_ptr<FanOutHub> hub_;
  std::unique_ptr<FanOutDispatcher> dispatcher_;
};

}  // namespace keel

#endif  // KEEL_CORE_FANOUT_H_
