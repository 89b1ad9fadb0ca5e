#include "keel/cmd/keel/server/push/redrive_delivery.h"

#include <vector>

#include "keel/cmd/keel/server/push/stale_lease.h"
#include "keel/cmd/keel/server/push/stream_delivery.h"
#include "keel/core/dead_letters.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::push {
namespace {

// Redrive's group has no other consumer: the lease need only outlast one
// batch's attempts in the common case (a later commit is still accepted).
constexpr absl::Duration kLease = absl::Minutes(10);

// The original events of the leading dead letters of `page` from one
// source stream, up to `until`; `last` is the sequence (on the dead-letter
// stream) of the last event taken, counting passed-over non-letters.
struct Batch {
  std::string stream;
  std::vector<Event> events;
  uint64_t last = 0;
};

Batch LeadingBatch(std::vector<Event>& page, uint64_t until, uint64_t epoch) {
  Batch batch;
  for (Event& event : page) {
    if (event.sequence > until) break;
    const uint64_t sequence = event.sequence;
    absl::StatusOr<DeadLetter> letter = DecodeDeadLetter(std::move(event), epoch);
    if (letter.ok()) {
      if (batch.events.empty()) batch.stream = letter->source_stream;
      if (letter->source_stream != batch.stream) break;
      Event original = OriginalEvent(*letter);
      original.attributes.erase(kPushStatusAttribute);
      batch.events.push_back(std::move(original));
    }
    batch.last = sequence;
  }
  return batch;
}

}  // namespace

RedriveDelivery::RedriveDelivery(EventBus& bus, const PushSubscription& subscription,
                                 BatchPoster& poster, DeliveryStats& stats)
    : bus_(bus), subscription_(subscription), poster_(poster), stats_(stats) {}

absl::StatusOr<RedriveStep> RedriveDelivery::Step(uint64_t until) {
  ConsumerGroups* groups = bus_.groups();
  if (groups == nullptr || bus_.replayer() == nullptr) {
    return absl::UnimplementedError("this driver keeps no consumer groups");
  }
  const std::string dlq = subscription_.DeadLetterStream();
  const std::string group = subscription_.RedriveGroupName();
  const uint64_t epoch = bus_.replayer()->epoch();
  if (!fenced_) {
    KEEL_RETURN_IF_ERROR(FenceStaleLease(*groups, dlq, group));
    fenced_ = true;
  }
  ConsumeRequest request{dlq, group, subscription_.batch_size, kLease,
                         ConsumeRequest::Start::kEarliest};
  KEEL_ASSIGN_OR_RETURN(ConsumePage page, groups->Consume(request));
  if (page.events.empty() || page.lease.token == 0) return RedriveStep{};
  const GroupLease lease = page.lease;
  auto give_back = [&] { groups->Commit(dlq, group, lease.from, lease.token).IgnoreError(); };
  Batch batch = LeadingBatch(page.events, until, epoch);
  if (batch.last == 0) {
    give_back();
    return RedriveStep{};
  }
  if (!batch.events.empty()) {
    const PostResult posted = poster_.Post(batch.stream, batch.events, epoch);
    if (posted.kind != PostResult::Kind::kDelivered) {
      give_back();
      if (posted.kind == PostResult::Kind::kAbandoned) {
        return RedriveStep{RedriveStep::Kind::kAbandoned, ""};
      }
      return RedriveStep{RedriveStep::Kind::kFailed, posted.last.reason};
    }
    stats_.Redriven(batch.events.size());
  }
  absl::Status committed =
      groups->Commit(dlq, group, Cursor::For(dlq, epoch, batch.last), lease.token);
  // A conflict: a new redrive sought the group meanwhile, and its position wins.
  if (!committed.ok() && GetErrorKind(committed) != ErrorKind::kConflict) return committed;
  return RedriveStep{RedriveStep::Kind::kSent, ""};
}

}  // namespace keel::push
