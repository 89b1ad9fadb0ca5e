// Internal: the shared core of FanOut, kept alive by subscriptions that
// outlive their FanOut (they then see kClosed).
// Each stream with subscribers has a FanOutTail (core/fanout_tail.h) that
// every delivery fills before it is offered, so a subscriber that finds the
// tail's end has been offered everything beyond it.
//
// Thread safety: two mutexes; `subs_mu_` guards the subscriber table and is
// held (shared) while offering events; `replay_mu_` guards the Replayer
// pointer and is held (shared) for each catch-up read so Detach() can wait
// for in-flight reads.
#ifndef KEEL_CORE_FANOUT_HUB_H_
#define KEEL_CORE_FANOUT_HUB_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "keel/core/mutex.h"
#include "keel/core/clock.h"
#include "keel/core/fanout_tail.h"
#include "keel/core/replayer.h"
#include "keel/core/subscription_impl.h"

namespace keel {

class FanOutHub {
 public:
  FanOutHub(Replayer* replayer, Clock* clock, size_t tail_events)
      : clock_(clock),
        tail_events_(tail_events),
        epoch_(replayer != nullptr ? replayer->epoch() : 0),
        can_replay_(replayer != nullptr),
        replayer_(replayer) {}

  Clock* clock() const { return clock_; }
  bool can_replay() const { return can_replay_; }
  uint64_t epoch() const { return epoch_; }

  absl::StatusOr<ReplayPage> Replay(const ReplayRequest& request);
  absl::StatusOr<StreamInfo> Bounds(absl::string_view stream);

  // Registers `state` and gives it its stream's tail.
  absl::Status Add(const std::shared_ptr<SubscriptionState>& state);
  void Remove(const SubscriptionState* state);
  void Deliver(absl::string_view stream, absl::Span<const EventPtr> events);
  // Delivers unless the stream has more than `max_subscribers`; false then.
  bool DeliverIfAtMost(absl::string_view stream, absl::Span<const EventPtr> events,
                       size_t max_subscribers);
  bool HasSubscribers(absl::string_view stream) const;
  void CloseAll();
  void Detach();

 private:
  struct StreamSubscribers {
    std::vector<std::shared_ptr<SubscriptionState>> states;
    // Where each state is in `states`, so that one of 10,000 subscribers
    // leaving is one swap, not a scan (offer order does not matter).
    absl::flat_hash_map<const SubscriptionState*, size_t> index;
    std::shared_ptr<FanOutTail> tail;
  };

  // Fills the tail and offers `events` to every subscriber of the stream.
  static void Offer(const StreamSubscribers& subscribers, absl::Span<const EventPtr> events);

  Clock* const clock_;
  const size_t tail_events_;
  const uint64_t epoch_;
  const bool can_replay_;

  mutable Mutex subs_mu_;
  absl::flat_hash_map<std::string, StreamSubscribers> subs_ ABSL_GUARDED_BY(subs_mu_);
  bool closed_ ABSL_GUARDED_BY(subs_mu_) = false;

  Mutex replay_mu_;
  Replayer* replayer_ ABSL_GUARDED_BY(replay_mu_);
};

}  // namespace keel

#endif  // KEEL_CORE_FANOUT_HUB_H_
