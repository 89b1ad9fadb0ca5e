// FenceStaleLease: ends the lease a crashed earlier process left on a
// group that has one consumer — a push subscription's worker — so a
// restart resumes at once instead of waiting for the lease to run out. A
// seek to the committed cursor fences the lease without moving the group.
//
// Thread safety: as the ConsumerGroups it is given.
#ifndef KEEL_CMD_KEEL_SERVER_PUSH_STALE_LEASE_H_
#define KEEL_CMD_KEEL_SERVER_PUSH_STALE_LEASE_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "keel/core/consumer_groups.h"

namespace keel::push {

// Only the group's single consumer may call it: another's live lease would
// be fenced too.
absl::Status FenceStaleLease(ConsumerGroups& groups, absl::string_view stream,
                             absl::string_view group);

}  // namespace keel::push

#endif  // KEEL_CMD_KEEL_SERVER_PUSH_STALE_LEASE_H_
