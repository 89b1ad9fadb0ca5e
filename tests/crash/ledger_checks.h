// The crash loop's final checks: what the daemon stored, what the SSE
// followers received and what the consumer group handled, each against the
// final replay of the streams and the publishers' receipts.
#ifndef KEEL_TESTS_CRASH_LEDGER_CHECKS_H_
#define KEEL_TESTS_CRASH_LEDGER_CHECKS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "keel/tests/crash/endpoint.h"
#include "keel/tests/crash/event_identity.h"
#include "keel/tests/crash/failures.h"
#include "keel/tests/crash/group_consumer.h"
#include "keel/tests/crash/publisher.h"

namespace keel::crash_test {

// A stream as a replay from `earliest` read it.
struct StreamReplay {
  std::string stream;
  std::vector<EventIdentity> events;
};

// Every event of `streams`, replayed from `earliest` through `endpoint`.
absl::StatusOr<std::vector<StreamReplay>> ReplayStreams(const Endpoint& endpoint,
                                                        const std::vector<std::string>& streams);

// Sequences 1..N without a gap; every acknowledged event stored exactly
// once, at the sequence and with the id of its receipt; nothing stored that
// was not acknowledged (every publish of unknown outcome was retried until
// acknowledged).
void CheckStored(const std::vector<StreamReplay>& replays, const std::vector<Receipt>& receipts,
                 Failures& failures);

// A follower received exactly the stream's events, in order, once each.
void CheckFollowed(const std::vector<EventIdentity>& followed, const StreamReplay& replay,
                   Failures& failures);

// The group handled every event of the stream at least once, committed its
// last one, and its committed position never went back.
void CheckHandled(const std::string& group, const GroupStream& consumed, const StreamReplay& replay,
                  Failures& failures);

}  // namespace keel::crash_test

#endif  // KEEL_TESTS_CRASH_LEDGER_CHECKS_H_
