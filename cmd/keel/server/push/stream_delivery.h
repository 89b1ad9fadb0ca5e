// StreamDelivery: one step of a subscription on one stream — consume a
// page in the subscription's consumer group, POST the events that pass the
// subscription's filters as one batch (retrying with backoff), and commit
// the page once the endpoint acknowledged it or its events were
// dead-lettered. A batch is committed only after either, so a crash at any
// point delivers it again (at least once) and never skips it; pages of one
// stream are delivered one after the other (in order).
//
// Dead letters go to the subscription's dead-letter stream
// ("push.<name>.dlq"), one per event, made by MakeDeadLetter
// (core/dead_letters.h, group "push.<name>") plus `keel.push.status` (the
// last HTTP status, 0 for no answer).
//
// Thread safety: steps on different streams may run concurrently (the
// subscription's lanes); one stream's steps run one at a time.
#ifndef KEEL_CMD_KEEL_SERVER_PUSH_STREAM_DELIVERY_H_
#define KEEL_CMD_KEEL_SERVER_PUSH_STREAM_DELIVERY_H_

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "keel/cmd/keel/server/push/batch_poster.h"
#include "keel/cmd/keel/server/push/delivery_stats.h"
#include "keel/cmd/keel/server/push/push_subscription.h"
#include "keel/core/event_bus.h"
#include "keel/core/mutex.h"

namespace keel::push {

inline constexpr char kPushStatusAttribute[] = "keel.push.status";

class StreamDelivery {
 public:
  // All must outlive the delivery.
  StreamDelivery(EventBus& bus, const PushSubscription& subscription, DeliveryStats& stats);

  // One page of `stream`, its batch sent by `poster`: true when it made
  // progress (delivered, filtered out or dead-lettered events), false when
  // there was nothing to send yet (no events, a batch still lingering) or
  // the work was abandoned.
  absl::StatusOr<bool> Step(const std::string& stream, BatchPoster& poster);

 private:
  enum class Result { kDelivered, kDeadLettered, kAbandoned };

  // Fences a stale lease on `stream` the first time it is stepped.
  absl::Status FenceOnce(ConsumerGroups& groups, const std::string& stream);
  absl::StatusOr<Result> Deliver(const std::string& stream, const std::vector<Event>& events,
                                 BatchPoster& poster);
  absl::Status DeadLetter(const std::vector<Event>& events, const PostResult& failed);
  bool Wanted(const Event& event) const;

  EventBus& bus_;
  const PushSubscription& subscription_;
  const std::string group_;
  DeliveryStats& stats_;
  Mutex mu_;
  // Streams whose stale lease was fenced (stale_lease.h).
  std::set<std::string> fenced_ ABSL_GUARDED_BY(mu_);
};

}  // namespace keel::push

#endif  // KEEL_CMD_KEEL_SERVER_PUSH_STREAM_DELIVERY_H_
