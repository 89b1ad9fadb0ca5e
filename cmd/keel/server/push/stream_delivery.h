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
// Thread safety: one caller at a time (the subscription's worker).
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

namespace keel::push {

inline constexpr char kPushStatusAttribute[] = "keel.push.status";

class StreamDelivery {
 public:
  // `poster` sends the batches; all must outlive the delivery.
  StreamDelivery(EventBus& bus, const PushSubscription& subscription, BatchPoster& poster,
                 DeliveryStats& stats);

  // One page of `stream`: true when it made progress (delivered, filtered
  // out or dead-lettered events), false when there was nothing to send yet
  // (no events, a batch still lingering) or the work was abandoned.
  absl::StatusOr<bool> Step(const std::string& stream);

 private:
  enum class Result { kDelivered, kDeadLettered, kAbandoned };

  absl::StatusOr<Result> Deliver(const std::string& stream, const std::vector<Event>& events);
  absl::Status DeadLetter(const std::vector<Event>& events, const PostResult& failed);
  bool Wanted(const Event& event) const;

  EventBus& bus_;
  const PushSubscription& subscription_;
  const std::string group_;
  BatchPoster& poster_;
  DeliveryStats& stats_;
  std::set<std::string> fenced_;  // Streams whose stale lease was fenced (stale_lease.h).
};

}  // namespace keel::push

#endif  // KEEL_CMD_KEEL_SERVER_PUSH_STREAM_DELIVERY_H_
