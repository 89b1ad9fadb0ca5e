#include "keel/cmd/keel/server/push/batch_poster.h"

#include "keel/cmd/keel/server/push/delivery_request.h"
#include "keel/cmd/keel/server/push/retry_delay.h"

namespace keel::push {

BatchPoster::BatchPoster(const PushSubscription& subscription, EndpointSender& sender,
                         CircuitBreaker& circuit, DeliveryStats& stats, PushSleeper sleep,
                         SecretSource secrets)
    : subscription_(subscription),
      sender_(sender),
      circuit_(circuit),
      stats_(stats),
      sleep_(std::move(sleep)),
      secrets_(std::move(secrets)) {}

bool BatchPoster::AwaitCircuit() {
  for (;;) {
    const absl::Time now = absl::Now();
    const CircuitBreaker::Gate gate = circuit_.Acquire(now);
    if (gate.go) return true;
    if (!sleep_(gate.ask_at - now)) return false;
  }
}

PostResult BatchPoster::Post(const std::string& stream, const std::vector<Event>& events,
                             uint64_t epoch) {
  const std::string body = DeliveryBody(subscription_.name, stream, events, epoch);
  PostResult result;
  for (;;) {
    if (!AwaitCircuit()) {
      result.kind = PostResult::Kind::kAbandoned;
      return result;
    }
    ++result.attempts;
    const client::Headers headers = DeliveryHeaders(subscription_.name, stream, events,
                                                    result.attempts, secrets_(), body, absl::Now());
    result.last = sender_.Post(body, headers);
    circuit_.Record(EndpointFailed(result.last), absl::Now());
    if (result.last.kind == AttemptOutcome::Kind::kDelivered) {
      stats_.Delivered(events.size(), result.last.status, result.last.latency);
      result.kind = PostResult::Kind::kDelivered;
      return result;
    }
    stats_.Failed(result.last.status, result.last.reason, result.last.latency);
    if (result.last.kind == AttemptOutcome::Kind::kRejected ||
        result.attempts >= subscription_.retry.max_attempts) {
      result.kind = PostResult::Kind::kFailed;
      return result;
    }
    if (!sleep_(
            RetryDelay(subscription_.retry, result.attempts, result.last.retry_after, random_))) {
      result.kind = PostResult::Kind::kAbandoned;
      return result;
    }
    stats_.Retried();
  }
}

}  // namespace keel::push
