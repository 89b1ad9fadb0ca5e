#include "keel/drivers/jetstream/claim.h"

#include <algorithm>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "keel/core/errors.h"
#include "keel/drivers/jetstream/record.h"

namespace keel::jetstream {

std::string SlotId(absl::string_view subject, uint64_t after) {
  return absl::StrCat(subject, "@", after);
}

std::string NewClaimId() {
  // Seeding a generator costs more than drawing from it: one per thread.
  thread_local absl::BitGen gen;
  return absl::StrFormat("%016x%016x", absl::Uniform<uint64_t>(gen), absl::Uniform<uint64_t>(gen));
}

absl::StatusOr<ClaimOutcome> PublishClaim(JetStreamApi& api, const Claim& claim,
                                          const ClaimTimeouts& timeouts) {
  NatsHeaders headers = claim.headers;
  headers.emplace_back("Nats-Msg-Id", SlotId(claim.subject, claim.after));
  headers.emplace_back("Nats-Expected-Last-Subject-Sequence", absl::StrCat(claim.after));
  if (claim.rollup) headers.emplace_back("Nats-Rollup", "sub");

  // Network time, not the bus's clock: a test's manual clock must not
  // stretch or cut a retry.
  const absl::Time start = absl::Now();
  absl::Duration backoff = absl::Milliseconds(50);
  bool maybe_stored = false;
  while (true) {
    const PublishReply reply = api.Publish(claim.subject, headers, claim.data, api.timeout());
    std::string problem;
    switch (reply.kind) {
      case PublishReply::Kind::kStored:
        return ClaimOutcome{ClaimOutcome::Kind::kStored, reply.sequence, false};
      case PublishReply::Kind::kDuplicate: {
        // One message per slot id: the slot holds this claim's own message
        // (an earlier attempt, whose answer was lost) or another writer's.
        absl::StatusOr<std::optional<StoredMessage>> holder = api.BySequence(reply.sequence);
        if (holder.ok()) {
          const std::string* id = *holder ? FindHeader((*holder)->headers, kClaimHeader) : nullptr;
          if (id != nullptr && *id == claim.id) {
            return ClaimOutcome{ClaimOutcome::Kind::kStored, reply.sequence, false};
          }
          return ClaimOutcome{ClaimOutcome::Kind::kTaken, 0, false};
        }
        problem = std::string(holder.status().message());
        break;
      }
      case PublishReply::Kind::kRejected:
        if (reply.error.err_code == kErrWrongLastSequence) {
          return ClaimOutcome{ClaimOutcome::Kind::kTaken, 0, maybe_stored};
        }
        if (reply.error.err_code == kErrMessageTooLarge) {
          return PayloadTooLarge(absl::StrCat("jetstream: the record of ", claim.data.size(),
                                              " bytes is larger than the stream accepts"));
        }
        if (reply.error.err_code == kErrStoreFailed &&
            absl::StrContains(reply.error.description, "maximum bytes")) {
          return Unavailable(absl::StrCat("jetstream: stream ", api.stream(),
                                          " is full (its max_bytes budget): trim or raise it"));
        }
        return ApiErrorStatus(reply.error, absl::StrCat("publish to ", claim.subject));
      case PublishReply::Kind::kUnknown:
        if (reply.connection_closed) return Closed("jetstream: the connection is closed");
        maybe_stored = maybe_stored || reply.may_have_reached;
        problem = reply.problem;
        break;
    }
    const absl::Duration waited = absl::Now() - start;
    if (waited + backoff > (maybe_stored ? timeouts.resolve : timeouts.publish)) {
      if (maybe_stored) {
        return OutcomeUnknownError(absl::StrCat(
            "jetstream: no JetStream answer for ", absl::FormatDuration(waited), " (", problem,
            "): the events may or may not be stored; publish them again with the same "
            "idempotency keys to find out"));
      }
      return Unavailable(absl::StrCat("jetstream: no JetStream answer for ",
                                      absl::FormatDuration(waited), " (", problem,
                                      "): the events are not stored"));
    }
    absl::SleepFor(backoff);
    backoff = std::min(backoff * 2, absl::Seconds(1));
  }
}

}  // namespace keel::jetstream
