#include "keel/cmd/keel/server/push/stream_delivery.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/push/stale_lease.h"
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
                               DeliveryStats& stats)
    : bus_(bus), subscription_(subscription), group_(subscription.GroupName()), stats_(stats) {}

bool StreamDelivery::Wanted(const Event& event) const {
  return absl::StartsWith(event.type, subscription_.type_prefix) &&
         (subscription_.tenant.empty() || event.tenant == subscription_.tenant);
}

absl::Status StreamDelivery::FenceOnce(ConsumerGroups& groups, const std::string& stream) {
  {
    MutexLock lock(&mu_);
    if (fenced_.contains(stream)) return absl::OkStatus();
  }
  // This worker is the group's only consumer: a lease left by a crashed
  // earlier process is stale. (Only this stream's lane steps it.)
  KEEL_RETURN_IF_ERROR(FenceStaleLease(groups, stream, group_));
  MutexLock lock(&mu_);
  fenced_.insert(stream);
  return absl::OkStatus();
}

absl::StatusOr<bool> StreamDelivery::Step(const std::string& stream, BatchPoster& poster) {
  ConsumerGroups* groups = bus_.groups();
  if (groups == nullptr) return absl::UnimplementedError("this driver keeps no consumer groups");
  KEEL_RETURN_IF_ERROR(FenceOnce(*groups, stream));
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
    absl::StatusOr<Result> result = Deliver(stream, wanted, poster);
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
                                                               const std::vector<Event>& events,
                                                               BatchPoster& poster) {
  const PostResult posted =
      poster.Post(stream, events, bus_.replayer() ? bus_.replayer()->epoch() : 0);
  switch (posted.kind) {
    case PostResult::Kind::kDelivered:
      return Result::kDelivered;
    case PostResult::Kind::kAbandoned:
      return Result::kAbandoned;
    case PostResult::Kind::kFailed:
      KEEL_RETURN_IF_ERROR(DeadLetter(events, posted));
      return Result::kDeadLettered;
  }
  return Result::kAbandoned;
}

absl::Status StreamDelivery::DeadLetter(const std::vector<Event>& events,
                                        const PostResult& failed) {
  std::vector<Event> letters;
  letters.reserve(events.size());
  for (const Event& event : events) {
    Event letter = MakeDeadLetter(event, group_, failed.last.reason, failed.attempts);
    letter.stream = subscription_.DeadLetterStream();
    letter.attributes[kPushStatusAttribute] = absl::StrCat(failed.last.status);
    letters.push_back(std::move(letter));
  }
  KEEL_RETURN_IF_ERROR(
      bus_.PublishBatch(subscription_.DeadLetterStream(), std::move(letters)).status());
  stats_.DeadLettered(events.size());
  return absl::OkStatus();
}

}  // namespace keel::push
