// RedriveDelivery: re-sends a subscription's dead letters to its endpoint
// after a fix (rfcs/0010-push-subscriptions.md, "Redrive"). Its cursor is
// the consumer group "push.<name>.redrive" on the dead-letter stream, so a
// letter that was redriven is not sent again by the next redrive, and a
// restart continues where it stopped.
//
// Each step sends one batch: the dead letters after the cursor, up to the
// redrive's last sequence, that came from one source stream — each as its
// original event (OriginalEvent in core/dead_letters.h: its stream,
// sequence, id and publish time), in a body like live delivery's. The
// cursor moves past a batch once the endpoint acknowledged it. A batch the
// endpoint rejects or that fails every attempt stops the redrive at it
// (the cursor stays before it and nothing is dead-lettered again), so a
// later redrive retries it; events on the dead-letter stream that are not
// dead letters are passed over.
//
// Thread safety: one caller at a time (the subscription's worker).
#ifndef KEEL_CMD_KEEL_SERVER_PUSH_REDRIVE_DELIVERY_H_
#define KEEL_CMD_KEEL_SERVER_PUSH_REDRIVE_DELIVERY_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "keel/cmd/keel/server/push/batch_poster.h"
#include "keel/cmd/keel/server/push/delivery_stats.h"
#include "keel/cmd/keel/server/push/push_subscription.h"
#include "keel/core/event_bus.h"

namespace keel::push {

struct RedriveStep {
  enum class Kind {
    kIdle,       // Nothing left up to `until`.
    kSent,       // A batch was redriven (or passed over).
    kFailed,     // The batch failed: the redrive stops; `reason` says why.
    kAbandoned,  // Stopped or paused: the batch is sent again later.
  };
  Kind kind = Kind::kIdle;
  std::string reason;
};

class RedriveDelivery {
 public:
  // All must outlive the delivery.
  RedriveDelivery(EventBus& bus, const PushSubscription& subscription, BatchPoster& poster,
                  DeliveryStats& stats);

  // One batch of the dead letters after the cursor whose sequences on the
  // dead-letter stream are at most `until`.
  absl::StatusOr<RedriveStep> Step(uint64_t until);

 private:
  EventBus& bus_;
  const PushSubscription& subscription_;
  BatchPoster& poster_;
  DeliveryStats& stats_;
  bool fenced_ = false;  // The lease a crashed earlier process left (stale_lease.h).
};

}  // namespace keel::push

#endif  // KEEL_CMD_KEEL_SERVER_PUSH_REDRIVE_DELIVERY_H_
