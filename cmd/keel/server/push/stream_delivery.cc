#include "keel/cmd/keel/server/push/stream_delivery.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/push/delivery_request.h"
#include "keel/cmd/keel/server/push/retry_delay.h"
#include "keel/core/dead_letters.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::push {
namespace {

// The lease only fences other consumers of the group, and this worker is
// its only one (a commit after an expired lease nobody took is accepted),
// so it need not cover every retry of a batch.
absl::Duration LeaseFor(const PushSubscription& subscription) {
  return std::clamp(subscription.timeout * 2, absl::Seconds(30), absl::Minutes(10));
}

}  // namespace

StreamDelivery::StreamDelivery(EventBus& bus, const PushSubscription& subscription,
                               EndpointSender& sender, DeliveryStats& stats, PushSleeper sleep,
                               SecretSource secrets)
    : bus_(bus),
      subscription_(subscription),
      group_(subscription.GroupName()),
      sender_(sender),
      stats_(stats),
      sleep_(std::move(sleep)),
      secrets_(std::move(secrets)) {}

absl::Status StreamDelivery::FenceStaleLease(const std::string& stream) {
  ConsumerGroups& groups = *bus_.groups();
  absl::StatusOr<GroupInfo> info = groups.Describe(stream, group_);
  if (GetErrorKind(info.status()) == ErrorKind::kNotFound) return absl::OkStatus();
  KEEL_RETURN_IF_ERROR(info.status());
  if (!info->lease) return absl::OkStatus();
  // A seek to the committed cursor fences the lease without moving the group.
  absl::Status sought = info->cursor.sequence == 0
                            ? groups.Seek(stream, group_, Position::Earliest())
                            : groups.Seek(stream, group_, Position::After(info->cursor));
  if (GetErrorKind(sought) == ErrorKind::kRetentionGap) {
    // Trimmed past the cursor: Consume would continue at the oldest event.
    sought = groups.Seek(stream, group_, Position::Earliest());
  }
  return sought;
}

bool StreamDelivery::Wanted(const Event& event) const {
  return absl::StartsWith(event.type, subscription_.type_prefix) &&
         (subscription_.tenant.empty() || event.tenant == subscription_.tenant);
}

absl::StatusOr<bool> StreamDelivery::Step(const std::string& stream) {
  ConsumerGroups* groups = bus_.groups();
  if (groups == nullptr) return absl::UnimplementedError("this driver keeps no consumer groups");
  if (fenced_.insert(stream).second) {
    if (absl::Status fenced = FenceStaleLease(stream); !fenced.ok()) {
      fenced_.erase(stream);
      return fenced;
    }
  }
  ConsumeRequest request{stream, group_, subscription_.batch_size, LeaseFor(subscription_),
                         ConsumeRequest::Start::kEarliest};
  KEEL_ASSIGN_OR_RETURN(ConsumePage page, groups->Consume(request));
  if (page.events.empty() || page.lease.token == 0) return false;
  const GroupLease& lease = page.lease;
  const bool full = page.events.size() >= subscription_.batch_size;
  if (!full && absl::Now() < page.events.front().time + subscription_.linger) {
    // Let the batch fill: give the page back untouched and come back later.
    KEEL_RETURN_IF_ERROR(groups->Commit(stream, group_, lease.from, lease.token));
    return false;
  }
  std::vector<Event> wanted;
  for (Event& event : page.events) {
    if (Wanted(event)) wanted.push_back(std::move(event));
  }
  if (!wanted.empty()) {
    absl::StatusOr<Result> result = Deliver(stream, wanted);
    if (!result.ok() || *result == Result::kAbandoned) {
      // Nothing of the page is committed: the next step sends it again.
      groups->Commit(stream, group_, lease.from, lease.token).IgnoreError();
      if (!result.ok()) return result.status();
      return false;
    }
  }
  absl::Status committed = groups->Commit(stream, group_, lease.to, lease.token);
  if (GetErrorKind(committed) == ErrorKind::kConflict) {
    // Someone sought the group meanwhile: its new position wins.
    return true;
  }
  KEEL_RETURN_IF_ERROR(committed);
  return true;
}

absl::StatusOr<StreamDelivery::Result> StreamDelivery::Deliver(const std::string& stream,
                                                               const std::vector<Event>& events) {
  const std::string body = DeliveryBody(subscription_.name, stream, events,
                                        bus_.replayer() ? bus_.replayer()->epoch() : 0);
  for (int attempt = 1;; ++attempt) {
    const client::Headers headers =
        DeliveryHeaders(subscription_.name, stream, events, attempt, secrets_(), body, absl::Now());
    const AttemptOutcome outcome = sender_.Post(body, headers);
    if (outcome.kind == AttemptOutcome::Kind::kDelivered) {
      stats_.Delivered(events.size(), outcome.status, outcome.latency);
      return Result::kDelivered;
    }
    stats_.Failed(outcome.status, outcome.reason, outcome.latency);
    if (outcome.kind == AttemptOutcome::Kind::kRejected ||
        attempt >= subscription_.retry.max_attempts) {
      KEEL_RETURN_IF_ERROR(DeadLetter(events, outcome, attempt));
      return Result::kDeadLettered;
    }
    if (!sleep_(RetryDelay(subscription_.retry, attempt, outcome.retry_after, random_))) {
      return Result::kAbandoned;
    }
    stats_.Retried();
  }
}

absl::Status StreamDelivery::DeadLetter(const std::vector<Event>& events,
                                        const AttemptOutcome& last, int attempts) {
  std::vector<Event> letters;
  letters.reserve(events.size());
  for (const Event& event : events) {
    Event letter = MakeDeadLetter(event, group_, last.reason, attempts);
    letter.stream = subscription_.DeadLetterStream();
    letter.attributes[kPushStatusAttribute] = absl::StrCat(last.status);
    letters.push_back(std::move(letter));
  }
  KEEL_RETURN_IF_ERROR(
      bus_.PublishBatch(subscription_.DeadLetterStream(), std::move(letters)).status());
  stats_.DeadLettered(events.size());
  return absl::OkStatus();
}

}  // namespace keel::push
