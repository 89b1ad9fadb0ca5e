// Claim: a conditional publish that claims the slot after a subject's last
// message, and survives not knowing whether it was stored.
//
// A claim carries two guards. `Nats-Expected-Last-Subject-Sequence` makes
// JetStream refuse the message unless the subject's last message is the one
// the writer read. On a replicated stream nats-server 2.9 checks that before
// proposing the message, not when it is applied (fixed in 2.9.21), so two
// writers with the same expectation can both pass it; the second guard
// closes that hole: `Nats-Msg-Id` names the claimed slot
// (`<subject>@<JetStream sequence of the message it follows>`), and
// JetStream's duplicate detection, which runs when a message is applied,
// stores at most one message per id within the stream's duplicate window.
//
// An attempt without an answer (timeout, no responders, no leader or
// quorum, a dropped connection) is sent again, unchanged, until it is
// answered: for `publish` while no attempt may have reached a leader, and
// for `resolve` once one may have (a timed-out request), because only an
// answer tells whether that one was stored; re-sending it is safe for as
// long as JetStream's duplicate window, which must therefore be longer. Its answers resolve it:
// stored; a duplicate of the message stored for the same slot, which is this writer's own when its
// Keel-Claim matches; or refused because the subject moved, in which case an earlier attempt may be
// stored after the slot the writer read and the writer's next read of the subject finds out
// (StoredRecord's Keel-Claim).
//
// Thread safety: a function over thread-safe objects.
#ifndef KEEL_DRIVERS_JETSTREAM_CLAIM_H_
#define KEEL_DRIVERS_JETSTREAM_CLAIM_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/drivers/jetstream/jetstream_api.h"
#include "keel/drivers/jetstream/nats_client.h"

namespace keel::jetstream {

struct Claim {
  std::string subject;
  uint64_t after = 0;   // JetStream sequence of the subject's last message; 0: none.
  std::string id;       // The Keel-Claim header's value (already in `headers`).
  NatsHeaders headers;  // The record's own headers.
  std::string data;
  bool rollup = false;  // Replace the subject's older messages (metadata records).
};

struct ClaimOutcome {
  enum class Kind {
    kStored,  // This claim's message is stored at `sequence`.
    kTaken,   // The slot is someone else's, or the subject moved on.
  };
  Kind kind = Kind::kTaken;
  uint64_t sequence = 0;
  // kTaken after an attempt without an answer: the message may be stored
  // after the slot the writer read.
  bool maybe_stored = false;
};

// The Nats-Msg-Id of the slot after message `after` of `subject`.
std::string SlotId(absl::string_view subject, uint64_t after);

// A fresh random claim id.
std::string NewClaimId();

// How long a claim is pursued without an answer (see above).
struct ClaimTimeouts {
  absl::Duration publish;
  absl::Duration resolve;  // At least `publish`.
};

// kUnavailable when no attempt was answered within `timeouts.publish` and
// none may have reached a leader (nothing is stored); OutcomeUnknownError
// when one may have and none was answered within `timeouts.resolve`;
// kPayloadTooLarge when JetStream refuses the size; kUnavailable for a full
// stream (its byte budget).
absl::StatusOr<ClaimOutcome> PublishClaim(JetStreamApi& api, const Claim& claim,
                                          const ClaimTimeouts& timeouts);

}  // namespace keel::jetstream

#endif  // KEEL_DRIVERS_JETSTREAM_CLAIM_H_
