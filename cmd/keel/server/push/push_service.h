// PushService: a daemon's push subscriptions (rfcs/0010-push-subscriptions.md)
// — their declarations, kept with the bus's data (SubscriptionLog), and one
// SubscriptionWorker each delivering them.
//
// Create declares a subscription: a new name starts delivering at once; the
// same declaration again is a no-op; a different one is kResourceDrift
// naming the fields. Pause/Resume, SetSecrets (rotation), Redrive and
// Delete are recorded before they return, and survive a restart. Deleting keeps the
// subscription's cursors (consumer groups "push.<name>") and dead letters;
// a new subscription of the same name starts afresh (Create seeks its
// groups on the streams that exist to its `start`).
//
// Thread safety: all methods are safe to call concurrently.
#ifndef KEEL_CMD_KEEL_SERVER_PUSH_PUSH_SERVICE_H_
#define KEEL_CMD_KEEL_SERVER_PUSH_PUSH_SERVICE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "keel/cmd/keel/server/push/delivery_stats.h"
#include "keel/cmd/keel/server/push/push_subscription.h"
#include "keel/cmd/keel/server/push/subscription_log.h"
#include "keel/cmd/keel/server/push/subscription_worker.h"
#include "keel/core/event_bus.h"
#include "keel/core/logger.h"
#include "keel/core/mutex.h"

namespace keel::push {

struct PushServiceOptions {
  WorkerOptions worker;
};

// One stream a subscription follows, and its cursor there.
struct StreamProgress {
  std::string stream;
  std::string cursor;  // The committed cursor token; "" before the first commit.
  uint64_t lag = 0;    // Events after it.
};

// The last redrive of a subscription's dead letters, in sequences of its
// dead-letter stream.
struct RedriveProgress {
  uint64_t until = 0;   // Its end; 0 when none was asked for.
  uint64_t cursor = 0;  // Dead letters up to here are redriven (or passed over).
};

// Which dead letters a redrive re-sends, by their sequences on the
// dead-letter stream (inclusive).
struct RedriveRange {
  uint64_t from = 0;  // 0: after the last redrive's cursor (letters not yet redriven).
  uint64_t to = 0;    // 0: up to the newest dead letter.
};

struct SubscriptionStatus {
  PushSubscription subscription;
  bool paused = false;
  RedriveProgress redrive;
  uint64_t lag = 0;  // Sum over `streams`.
  std::vector<StreamProgress> streams;
  DeliveryCounts counts;
};

class PushService {
 public:
  // `bus` and `logger` must outlive the service.
  PushService(EventBus& bus, PushServiceOptions options, Logger& logger);
  ~PushService();  // Stop()

  // Reads the stored subscriptions and starts delivering them.
  absl::Status Start();
  // Stops every worker (before the bus closes).
  void Stop();
  // The daemon's own address, once it listens. An endpoint on this port of
  // a loopback address, "localhost" or `host` is refused unless the
  // subscription allows it (allowSelf): it would deliver to itself.
  void SetSelfAddress(std::string host, uint16_t port);

  // The stored declaration and whether it was created now.
  struct Created {
    SubscriptionStatus status;
    bool created = false;
  };
  absl::StatusOr<Created> Create(PushSubscription subscription);
  absl::StatusOr<SubscriptionStatus> Describe(const std::string& name);
  // Every subscription, by name.
  absl::StatusOr<std::vector<SubscriptionStatus>> List();
  absl::Status SetPaused(const std::string& name, bool paused);
  // The signing secrets from now on (one or two: new first, then the one
  // receivers may still hold).
  absl::Status SetSecrets(const std::string& name, std::vector<std::string> secrets);
  absl::Status Delete(const std::string& name);
  // Re-sends dead letters in `range` to the endpoint (redrive_delivery.h),
  // replacing a redrive in progress; recorded before it returns, so a
  // restart continues it. kInvalidArgument for a range that holds none.
  absl::Status Redrive(const std::string& name, RedriveRange range);

  // Per-subscription counters for /metrics (Prometheus text).
  std::string MetricsText();

 private:
  struct Entry {
    StoredSubscription stored;
    std::shared_ptr<DeliveryStats> stats;
    std::unique_ptr<SubscriptionWorker> worker;
  };

  absl::Status CheckNotSelf(const PushSubscription& subscription)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Declares the dead_letter.* policy of a new subscription's
  // DeadLetterSource() when it sets one (kResourceDrift when that stream
  // is declared otherwise).
  absl::Status DeclareDeadLetterRetention(const PushSubscription& subscription);
  // Positions the groups of a new subscription on the streams that exist.
  absl::Status SeekToStart(const PushSubscription& subscription);
  // The end of a redrive of `range`, after positioning redrive's group at
  // its start; 0 when there are no dead letters.
  absl::StatusOr<uint64_t> PrepareRedrive(const PushSubscription& subscription, RedriveRange range);
  void StartWorker(Entry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads the bus for the cursors: called without mu_ held.
  SubscriptionStatus StatusOf(const StoredSubscription& stored, const DeliveryStats& stats);

  EventBus& bus_;
  const PushServiceOptions options_;
  Logger& logger_;
  SubscriptionLog log_;
  Mutex mu_;  // Serialises changes, so the log's order is the map's.
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  std::string self_host_ ABSL_GUARDED_BY(mu_);
  uint16_t self_port_ ABSL_GUARDED_BY(mu_) = 0;  // 0: unknown.
};

}  // namespace keel::push

#endif  // KEEL_CMD_KEEL_SERVER_PUSH_PUSH_SERVICE_H_
