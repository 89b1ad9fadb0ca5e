// SubscriptionLog: push subscriptions kept with the bus's data, as events
// on the stream "keel.push.subscriptions" — one event per change (declared,
// paused, resumed, secrets rotated, redriven, deleted) carrying the whole record, so
// the last event of a name is its state. A restart replays the stream.
//
// The stream is declared with unbounded retention so a --default-policy
// with a retention bound cannot trim subscriptions away. The records hold
// the signing secrets (the daemon must sign with them): whoever reads the
// bus's data or has read access to this stream sees them.
//
// Thread safety: Append is safe to call concurrently; callers serialise
// changes to one name (PushService does).
#ifndef KEEL_CMD_KEEL_SERVER_PUSH_SUBSCRIPTION_LOG_H_
#define KEEL_CMD_KEEL_SERVER_PUSH_SUBSCRIPTION_LOG_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "keel/cmd/keel/server/push/push_subscription.h"
#include "keel/core/event_bus.h"

namespace keel::push {

inline constexpr char kSubscriptionLogStream[] = "keel.push.subscriptions";

struct StoredSubscription {
  PushSubscription subscription;
  bool paused = false;
  // The last redrive's end: a sequence of the dead-letter stream; 0 when
  // none was asked for.
  uint64_t redrive_until = 0;
};

class SubscriptionLog {
 public:
  explicit SubscriptionLog(EventBus& bus) : bus_(bus) {}

  // Declares the record stream and reads every subscription it holds, by
  // name. kDataLoss for a record that does not parse.
  absl::StatusOr<std::map<std::string, StoredSubscription>> Load();

  // Records the state of one subscription.
  absl::Status Put(const StoredSubscription& stored);
  absl::Status Delete(const std::string& name);

 private:
  absl::Status Append(std::string payload);

  EventBus& bus_;
};

}  // namespace keel::push

#endif  // KEEL_CMD_KEEL_SERVER_PUSH_SUBSCRIPTION_LOG_H_
