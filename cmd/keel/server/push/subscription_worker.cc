#include "keel/cmd/keel/server/push/subscription_worker.h"

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/push/circuit_breaker.h"
#include "keel/cmd/keel/server/push/delivery_lanes.h"
#include "keel/cmd/keel/server/push/redrive_delivery.h"
#include "keel/cmd/keel/server/push/stream_delivery.h"
#include "keel/core/status_macros.h"

namespace keel::push {
namespace {

constexpr size_t kMaxListedStreams = 100'000;
// After an error (the store, a dead letter that could not be published)
// the worker waits at least this long before trying again.
constexpr absl::Duration kErrorPause = absl::Seconds(1);

}  // namespace

SubscriptionWorker::SubscriptionWorker(EventBus& bus, PushSubscription subscription, bool paused,
                                       DeliveryStats& stats, WorkerOptions options, Logger& logger)
    : bus_(bus),
      subscription_(std::move(subscription)),
      stats_(stats),
      options_(std::move(options)),
      logger_(logger),
      paused_(paused),
      secrets_(subscription_.secrets) {}

SubscriptionWorker::~SubscriptionWorker() { Stop(); }

void SubscriptionWorker::Start() {
  thread_ = std::thread([this] { Run(); });
}

void SubscriptionWorker::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    changed_.SignalAll();
  }
  bell_->Ring();
  if (thread_.joinable()) thread_.join();
}

void SubscriptionWorker::SetPaused(bool paused) {
  MutexLock lock(&mu_);
  paused_ = paused;
  changed_.SignalAll();
  bell_->Ring();
}

void SubscriptionWorker::SetSecrets(std::vector<std::string> secrets) {
  MutexLock lock(&mu_);
  secrets_ = std::move(secrets);
}

std::vector<std::string> SubscriptionWorker::Secrets() {
  MutexLock lock(&mu_);
  return secrets_;
}

void SubscriptionWorker::SetRedrive(uint64_t until) {
  MutexLock lock(&mu_);
  redrive_.until = until;
  ++redrive_.generation;
  changed_.SignalAll();
  bell_->Ring();
}

SubscriptionWorker::PendingRedrive SubscriptionWorker::Redrive() {
  MutexLock lock(&mu_);
  return redrive_;
}

void SubscriptionWorker::FinishRedrive(uint64_t generation, const std::string& reason) {
  MutexLock lock(&mu_);
  if (redrive_.generation != generation) return;
  redrive_.until = 0;
  if (!reason.empty()) stats_.RedriveFailed(reason);
}

bool SubscriptionWorker::Sleep(absl::Duration delay) {
  const absl::Time deadline = absl::Now() + delay;
  MutexLock lock(&mu_);
  while (!stopping_ && !paused_ && absl::Now() < deadline) {
    changed_.WaitWithDeadline(&mu_, deadline);
  }
  return !stopping_ && !paused_;
}

absl::StatusOr<std::vector<std::string>> SubscriptionWorker::MatchingStreams(
    EventBus& bus, const PushSubscription& subscription) {
  std::vector<std::string> streams;
  Replayer* replayer = bus.replayer();
  if (replayer == nullptr) return absl::UnimplementedError("this driver keeps no history");
  KEEL_ASSIGN_OR_RETURN(
      std::vector<StreamInfo> infos,
      replayer->ListStreams(subscription.streams.literal_prefix(), kMaxListedStreams));
  for (const StreamInfo& info : infos) {
    if (subscription.streams.Matches(info.stream)) streams.push_back(info.stream);
  }
  return streams;
}

absl::StatusOr<bool> SubscriptionWorker::DeliverStreams(DeliveryLanes& lanes,
                                                        StreamDelivery& delivery,
                                                        StreamWatch& watch) {
  KEEL_ASSIGN_OR_RETURN(std::vector<std::string> streams, MatchingStreams(bus_, subscription_));
  watch.Follow(streams);
  watch.Rearm();  // Before the steps: an event published during them rings the bell.
  return lanes.RunPass(streams, [&delivery](const std::string& stream, BatchPoster& poster) {
    return delivery.Step(stream, poster);
  });
}

absl::StatusOr<bool> SubscriptionWorker::StepRedrive(RedriveDelivery& redrive) {
  const PendingRedrive pending = Redrive();
  if (pending.until == 0) return false;
  KEEL_ASSIGN_OR_RETURN(RedriveStep step, redrive.Step(pending.until));
  switch (step.kind) {
    case RedriveStep::Kind::kSent:
      return true;
    case RedriveStep::Kind::kIdle:
      FinishRedrive(pending.generation, "");
      return false;
    case RedriveStep::Kind::kFailed:
      logger_.Warn(absl::StrCat("push subscription ", subscription_.name,
                                ": redrive stopped at a batch that failed: ", step.reason));
      FinishRedrive(pending.generation, step.reason);
      return false;
    case RedriveStep::Kind::kAbandoned:
      return false;
  }
  return false;
}

void SubscriptionWorker::Run() {
  absl::StatusOr<EndpointUrl> url = ParseEndpointUrl(subscription_.endpoint);
  if (!url.ok()) return;  // Validated when declared.
  CircuitBreaker circuit(subscription_.circuit, stats_);
  DeliveryLanes lanes(
      subscription_, *url, options_.ca_file, circuit, stats_,
      [this](absl::Duration d) { return Sleep(d); }, [this] { return Secrets(); });
  StreamDelivery delivery(bus_, subscription_, stats_);
  RedriveDelivery redrive(bus_, subscription_, lanes.first(), stats_);
  StreamWatch watch(bus_, bell_);
  for (;;) {
    {
      MutexLock lock(&mu_);
      while (paused_ && !stopping_) changed_.Wait(&mu_);
      if (stopping_) return;
    }
    // Live batches first, then one redrive batch: a redrive never holds up
    // new events for more than one batch.
    absl::StatusOr<bool> delivered = DeliverStreams(lanes, delivery, watch);
    absl::StatusOr<bool> redriven = delivered.ok() ? StepRedrive(redrive) : false;
    const absl::Status status = delivered.ok() ? redriven.status() : delivered.status();
    if (!status.ok()) {
      if (GetErrorKind(status) == ErrorKind::kClosed) return;  // The bus is shutting down.
      logger_.Warn(absl::StrCat("push subscription ", subscription_.name, ": ", status.message()));
      Sleep(kErrorPause);
      continue;
    }
    if (!*delivered && !*redriven) bell_->Wait(options_.poll_interval);
  }
}

}  // namespace keel::push
