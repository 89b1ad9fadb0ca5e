// DeliveryLanes: a subscription's `concurrency` lanes. Each lane is a
// BatchPoster on an EndpointSender of its own — one kept-alive connection
// to the endpoint each, so the lanes are the subscription's connection
// pool — and all pass one CircuitBreaker.
//
// RunPass hands each stream of a pass to one lane, which takes one step on
// it (so a stream's batches are never in flight on two lanes at once and
// stay in order), and returns when every stream was stepped. Lane 0 works
// on the calling thread; the others on threads of their own, started with
// the lanes and joined when they are destroyed. With one lane a pass runs
// wholly on the caller's thread.
//
// Thread safety: RunPass and first() from one thread at a time (the
// subscription's worker); the steps run on the lanes' threads.
#ifndef KEEL_CMD_KEEL_SERVER_PUSH_DELIVERY_LANES_H_
#define KEEL_CMD_KEEL_SERVER_PUSH_DELIVERY_LANES_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "keel/cmd/keel/server/push/batch_poster.h"
#include "keel/cmd/keel/server/push/circuit_breaker.h"
#include "keel/cmd/keel/server/push/endpoint_sender.h"
#include "keel/cmd/keel/server/push/endpoint_url.h"
#include "keel/core/mutex.h"

namespace keel::push {

// What a lane does with one stream: one step, and whether it made progress.
using StreamStep = std::function<absl::StatusOr<bool>(const std::string& stream, BatchPoster&)>;

class DeliveryLanes {
 public:
  // `subscription`, `circuit` and `stats` must outlive the lanes.
  DeliveryLanes(const PushSubscription& subscription, const EndpointUrl& url,
                const std::string& ca_file, CircuitBreaker& circuit, DeliveryStats& stats,
                const PushSleeper& sleep, const SecretSource& secrets);
  ~DeliveryLanes();
  DeliveryLanes(const DeliveryLanes&) = delete;
  DeliveryLanes& operator=(const DeliveryLanes&) = delete;

  // Steps every stream of `streams` once, on the lanes: whether any step
  // made progress, or the first error a step returned (the other streams
  // are stepped all the same).
  absl::StatusOr<bool> RunPass(const std::vector<std::string>& streams, const StreamStep& step);

  // Lane 0's poster, for work of the caller's own (redrive).
  BatchPoster& first() { return lanes_.front()->poster; }

 private:
  struct Lane {
    Lane(const PushSubscription& subscription, const EndpointUrl& url, const std::string& ca_file,
         CircuitBreaker& circuit, DeliveryStats& stats, const PushSleeper& sleep,
         const SecretSource& secrets);
    EndpointSender sender;
    BatchPoster poster;
  };
  // One pass in progress: its streams are taken in turn by the lanes.
  struct Pass {
    const std::vector<std::string>* streams = nullptr;
    const StreamStep* step = nullptr;
    size_t next = 0;  // The next stream to take.
    int working = 0;  // Helper lanes still in this pass.
    bool progress = false;
    absl::Status error;  // The first a step returned.
  };

  // Takes streams of the pass in hand and steps them on `lane` until none
  // is left.
  void Work(Lane& lane);
  void Helper(Lane& lane);  // A helper lane's thread.

  std::vector<std::unique_ptr<Lane>> lanes_;
  std::vector<std::thread> helpers_;
  Mutex mu_;
  CondVar changed_;
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;  // Of the pass in hand.
  Pass pass_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace keel::push

#endif  // KEEL_CMD_KEEL_SERVER_PUSH_DELIVERY_LANES_H_
