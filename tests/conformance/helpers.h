// Internal helpers shared by the conformance tests (not part of the public
// header): building events, publishing, paging through replays and reading
// subscriptions with generous deadlines.
#ifndef KEEL_TESTS_CONFORMANCE_HELPERS_H_
#define KEEL_TESTS_CONFORMANCE_HELPERS_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/core/event_bus.h"

namespace keel::conformance {

// How long a test waits for something that should happen promptly. Generous
// on purpose: slow CI machines must not turn waiting into failures.
inline constexpr absl::Duration kWait = absl::Seconds(10);
// Upper bound for a whole multi-step read.
inline constexpr absl::Duration kLongWait = absl::Seconds(60);

// A valid event for `stream`; `payload` defaults to a unique marker.
Event MakeEvent(absl::string_view stream, absl::string_view type = "test.event",
                absl::string_view payload = "");

// Publishes `count` events one at a time; event i has payload "<tag>-<i>".
absl::StatusOr<std::vector<Receipt>> PublishN(EventBus& bus, absl::string_view stream, int count,
                                              absl::string_view tag = "e");

// Pages through a replay until `reached_end`, failing if a page does not
// advance. Returns every event of every page.
absl::StatusOr<std::vector<Event>> ReplayAll(Replayer& replayer, ReplayRequest request);
// Every event of `stream` from earliest.
absl::StatusOr<std::vector<Event>> ReplayStream(Replayer& replayer, absl::string_view stream);

std::vector<uint64_t> Sequences(const std::vector<Event>& events);
std::vector<uint64_t> Sequences(const std::vector<EventPtr>& events);
std::vector<uint64_t> Sequences(const std::vector<Receipt>& receipts);
// first..last inclusive (empty when last < first).
std::vector<uint64_t> Range(uint64_t first, uint64_t last);

bool IsNotice(const Event& event);

// What a subscription delivered: events and notices, in arrival order each.
struct ReadResult {
  std::vector<EventPtr> events;   // Real events (sequence > 0).
  std::vector<EventPtr> notices;  // bus.dropped / bus.gap notices.
  std::vector<EventPtr> all;      // Both, in arrival order.
  absl::Status status;            // First error returned, if any.
};

// Subscribes and polls once, expecting nothing. A new subscription first
// reads what its start position needs from the Replayer; the first poll that
// finds nothing makes it live, where its queue, overflow policy and Close's
// drain apply. Tests of those start from there.
absl::StatusOr<std::unique_ptr<Subscription>> SubscribeLive(EventBus& bus,
                                                            const SubscribeOptions& options);

// Reads until an event with sequence >= `last` arrives, an error is returned,
// the subscription stays silent for kWait or `deadline` passes.
ReadResult ReadThrough(Subscription& subscription, uint64_t last,
                       absl::Duration deadline = kLongWait);
// Reads until the subscription returns an error (e.g. kClosed), stays silent
// for kWait or `deadline` passes.
ReadResult ReadToError(Subscription& subscription, absl::Duration deadline = kLongWait);

// Sequences named by a notice's "ranges" attribute ("a-b,c-d"); an empty set
// when it does not parse.
std::set<uint64_t> NoticeRangeSequences(const Event& notice);
uint64_t NoticeAttribute(const Event& notice, absl::string_view key);

// One per test file; ForceLink() calls them all so a static link keeps every
// file's tests.
void LinkSequenceTests();
void LinkPublishTests();
void LinkReplayTests();
void LinkPolicyTests();
void LinkRetentionPolicyTests();
void LinkCursorTests();
void LinkFollowTests();
void LinkOverflowTests();
void LinkCloseTests();
void LinkRetentionTests();
void LinkGroupTests();
void LinkGroupRaceTests();
void LinkProcessTests();
void LinkGroupRetentionTests();
void LinkDeletionTests();

}  // namespace keel::conformance

#endif  // KEEL_TESTS_CONFORMANCE_HELPERS_H_
