// Internal: the shared core of FanOut, kept alive by subscriptions that
// outlive their FanOut (they then see kClosed).
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
#include "core/mutex.h"
#include "core/clock.h"
#include "core/replayer.h"
#include "core/subscription_impl.h"

namespace keel {

class FanOutHub {
 public:
  FanOutHub(Replayer* replayer, Clock* clock)
      : clock_(clock),
        epoch_(replayer != nullptr ? replayer->epoch() : 0),
        can_replay_(replayer != nullptr),
        replayer_(replayer) {}

  Clock* clock() const { return clock_; }
  bool can_replay() const { return can_replay_; }
  uint64_t epoch() const { return epoch_; }

  absl::StatusOr<ReplayPage> Replay(const ReplayRequest& request);
  absl::StatusOr<StreamInfo> Bounds(absl::string_view stream);

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
  Clock* const clock_;
  const uint64_t epoch_;
  const bool can_replay_;

  mutable Mutex subs_mu_;
  absl::flat_hash_map<std::string, std::vector<std::shared_ptr<SubscriptionState>>> subs_
      ABSL_GUARDED_BY(subs_mu_);
  bool closed_ ABSL_GUARDED_BY(subs_mu_) = false;

  Mutex replay_mu_;
  Replayer* replayer_ ABSL_GUARDED_BY(replay_mu_);
};

}  // namespace keel

#endif  // KEEL_CORE_FANOUT_HUB_H_
