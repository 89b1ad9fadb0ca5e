// SubscriptionWorker: the thread that delivers one push subscription. Each
// pass lists the streams its pattern matches (so streams created later
// join without a restart) and takes one step (StreamDelivery) on each, so
// one busy stream does not starve the others; with nothing to send it
// waits `poll_interval`. Up to `concurrency` batches, of different streams,
// are in flight at once (DeliveryLanes), all behind one CircuitBreaker: a
// slow or failing endpoint holds back only its own subscription, never
// another's or a publish.
//
// A redrive (SetRedrive) re-sends the dead letters up to a sequence of the
// dead-letter stream, one batch per pass beside the streams'
// (RedriveDelivery), until it reached that sequence or a batch failed.
//
// Between passes with nothing to send the worker waits `poll_interval`, or
// less: an event on a matching stream wakes it (StreamWatch).
//
// Pause takes effect between attempts: a batch waiting for its retry is
// abandoned (not committed, so sent again on resume). Stop does the same
// and joins the thread; a POST already sent is awaited (bounded by the
// subscription's timeout).
//
// Thread safety: all methods are safe to call concurrently.
#ifndef KEEL_CMD_KEEL_SERVER_PUSH_SUBSCRIPTION_WORKER_H_
#define KEEL_CMD_KEEL_SERVER_PUSH_SUBSCRIPTION_WORKER_H_

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "keel/cmd/keel/server/push/delivery_stats.h"
#include "keel/cmd/keel/server/push/push_subscription.h"
#include "keel/cmd/keel/server/push/stream_watch.h"
#include "keel/core/event_bus.h"
#include "keel/core/logger.h"
#include "keel/core/mutex.h"

namespace keel::push {

class DeliveryLanes;
class StreamDelivery;
class RedriveDelivery;
class StreamWatch;

struct WorkerOptions {
  absl::Duration poll_interval = absl::Milliseconds(100);
  std::string ca_file;  // Trusted CAs for https endpoints; empty: the system's.
};

class SubscriptionWorker {
 public:
  // `bus`, `stats` and `logger` must outlive the worker.
  SubscriptionWorker(EventBus& bus, PushSubscription subscription, bool paused,
                     DeliveryStats& stats, WorkerOptions options, Logger& logger);
  ~SubscriptionWorker();  // Stop()
  SubscriptionWorker(const SubscriptionWorker&) = delete;
  SubscriptionWorker& operator=(const SubscriptionWorker&) = delete;

  void Start();
  void Stop();
  void SetPaused(bool paused);
  void SetSecrets(std::vector<std::string> secrets);
  // Redrives the dead letters after redrive's cursor up to `until` (a
  // sequence of the dead-letter stream); replaces a redrive in progress.
  void SetRedrive(uint64_t until);

  // The streams the pattern matches now (sorted).
  static absl::StatusOr<std::vector<std::string>> MatchingStreams(
      EventBus& bus, const PushSubscription& subscription);

 private:
  void Run();
  // One step on each matching stream; whether any made progress.
  absl::StatusOr<bool> DeliverStreams(DeliveryLanes& lanes, StreamDelivery& delivery,
                                      StreamWatch& watch);
  // One batch of the redrive in progress, if any; whether it sent one.
  absl::StatusOr<bool> StepRedrive(RedriveDelivery& redrive);
  // Waits `delay` unless stopped or paused first; false then.
  bool Sleep(absl::Duration delay);
  std::vector<std::string> Secrets();
  struct PendingRedrive {
    uint64_t until = 0;       // 0: none.
    uint64_t generation = 0;  // Of the SetRedrive it comes from.
  };
  PendingRedrive Redrive();
  // Ends the redrive of `generation` (done, or failed for `reason`) unless a
  // newer one replaced it.
  void FinishRedrive(uint64_t generation, const std::string& reason);

  EventBus& bus_;
  const PushSubscription subscription_;  // Its secrets are secrets_.
  DeliveryStats& stats_;
  const WorkerOptions options_;
  Logger& logger_;
  Mutex mu_;
  CondVar changed_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool paused_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::string> secrets_ ABSL_GUARDED_BY(mu_);
  PendingRedrive redrive_ ABSL_GUARDED_BY(mu_);
  // Rung by events on matching streams, and by Stop, SetPaused and
  // SetRedrive: ends the wait between passes.
  const std::shared_ptr<Doorbell> bell_ = std::make_shared<Doorbell>();
  std::thread thread_;
};

}  // namespace keel::push

#endif  // KEEL_CMD_KEEL_SERVER_PUSH_SUBSCRIPTION_WORKER_H_
