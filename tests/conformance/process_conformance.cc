// Process: retries with backoff, dead letters carrying the reason and the
// attempt count, no second dead letter when a page is redelivered, listing
// and republishing dead letters, and the Process loop until stopped.
#include <gmock/gmock.h>

#include <atomic>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "keel/core/dead_letters.h"
#include "keel/core/errors.h"
#include "keel/core/group_processor.h"
#include "keel/core/policy_registry.h"
#include "keel/tests/conformance/conformance.h"
#include "keel/tests/conformance/helpers.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::conformance {

void LinkProcessTests() {}

namespace {

using ::keel::testing::HasErrorKind;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Options whose waits are recorded instead of slept.
ProcessOptions RecordingOptions(std::vector<absl::Duration>* waits) {
  ProcessOptions options;
  options.max_attempts = 3;
  options.backoff = Backoff{absl::Milliseconds(10), 2.0, absl::Milliseconds(15)};
  options.lease = absl::Seconds(10);
  options.sleep = [waits](absl::Duration delay) {
    waits->push_back(delay);
    return true;
  };
  return options;
}

// Fails every call for events whose payload is in `poison`.
EventHandler FailOn(std::set<std::string> poison, std::map<uint64_t, int>* calls) {
  return [poison, calls](const Event& event) {
    ++(*calls)[event.sequence];
    if (poison.count(event.payload)) return absl::InternalError("boom: " + event.payload);
    return absl::OkStatus();
  };
}

TEST_P(GroupConformanceTest, FailingEventIsRetriedWithBackoffThenDeadLettered) {
  Event tagged = MakeEvent("jobs", "job.run", "bad");
  tagged.tenant = "acme";
  tagged.attributes["origin"] = "web";
  ASSERT_OK(bus().Publish(MakeEvent("jobs", "job.run", "ok-1")).status());
  ASSERT_OK_AND_ASSIGN(Receipt bad, bus().Publish(tagged));
  ASSERT_OK(bus().Publish(MakeEvent("jobs", "job.run", "ok-2")).status());
  std::vector<absl::Duration> waits;
  std::map<uint64_t, int> calls;
  ASSERT_OK_AND_ASSIGN(ProcessResult result,
                       ProcessOnce(bus(), "jobs", "workers", FailOn({"bad"}, &calls),
                                   RecordingOptions(&waits)));
  EXPECT_EQ(result.handled, 2u);
  EXPECT_EQ(result.dead_lettered, 1u);
  EXPECT_EQ(result.retries, 2u);
  EXPECT_THAT(calls, ElementsAre(std::pair<const uint64_t, int>{1, 1},
                                 std::pair<const uint64_t, int>{2, 3},
                                 std::pair<const uint64_t, int>{3, 1}));
  EXPECT_THAT(waits, ElementsAre(absl::Milliseconds(10), absl::Milliseconds(15)));
  ASSERT_OK_AND_ASSIGN(GroupInfo info, groups().Describe("jobs", "workers"));
  EXPECT_EQ(info.cursor.sequence, 3u) << "the group moves on past the dead letter";

  ASSERT_OK_AND_ASSIGN(DeadLetterPage page,
                       ListDeadLetters(bus(), "jobs", Position::Earliest(), 100));
  ASSERT_EQ(page.letters.size(), 1u);
  const DeadLetter& letter = page.letters[0];
  EXPECT_EQ(letter.source_stream, "jobs");
  EXPECT_EQ(letter.source_sequence, 2u);
  EXPECT_EQ(letter.source_id, bad.id);
  EXPECT_EQ(letter.group, "workers");
  EXPECT_EQ(letter.reason, "boom: bad");
  EXPECT_EQ(letter.attempts, 3u);
  EXPECT_EQ(letter.event.stream, DeadLetterStream("jobs"));
  EXPECT_EQ(letter.event.payload, "bad");
  EXPECT_EQ(letter.event.tenant, "acme");
  EXPECT_EQ(letter.event.type, "job.run");
  EXPECT_EQ(letter.event.attributes.at("origin"), "web");
  ASSERT_OK_AND_ASSIGN(DeadLetter same, GetDeadLetter(bus(), "jobs", letter.cursor.sequence));
  EXPECT_EQ(same.event.id, letter.event.id);
  EXPECT_THAT(GetDeadLetter(bus(), "jobs", 99), HasErrorKind(ErrorKind::kNotFound));
}

TEST_P(GroupConformanceTest, EventThatRecoversOnRetryIsNotDeadLettered) {
  ASSERT_OK(PublishN(bus(), "flaky", 1).status());
  int calls = 0;
  EventHandler handler = [&calls](const Event&) {
    return ++calls < 3 ? absl::UnavailableError("not yet") : absl::OkStatus();
  };
  std::vector<absl::Duration> waits;
  ASSERT_OK_AND_ASSIGN(ProcessResult result,
                       ProcessOnce(bus(), "flaky", "g", handler, RecordingOptions(&waits)));
  EXPECT_EQ(result.handled, 1u);
  EXPECT_EQ(result.dead_lettered, 0u);
  EXPECT_EQ(calls, 3);
  ASSERT_OK_AND_ASSIGN(DeadLetterPage page,
                       ListDeadLetters(bus(), "flaky", Position::Earliest(), 100));
  EXPECT_THAT(page.letters, IsEmpty());
}

TEST_P(GroupConformanceTest, RedeliveredPageDoesNotDeadLetterTwice) {
  ASSERT_OK(PublishN(bus(), "twice", 2).status());
  std::vector<absl::Duration> waits;
  ProcessOptions options = RecordingOptions(&waits);
  bool stolen = false;
  // Event 1 always fails; while handling event 2 the lease expires and
  // another member takes the group, so this member's commit is refused
  // after it dead-lettered event 1 — as if it crashed before committing.
  EventHandler handler = [&](const Event& event) {
    if (event.sequence == 1) return absl::InternalError("poison");
    if (!stolen) {
      stolen = true;
      clock().Advance(options.lease);
      ConsumeRequest thief{"twice", "g", 1, options.lease, ConsumeRequest::Start::kEarliest};
      EXPECT_OK(groups().Consume(thief).status());
      clock().Advance(options.lease);  // And the thief crashes too.
    }
    return absl::OkStatus();
  };
  ASSERT_OK_AND_ASSIGN(ProcessResult lost, ProcessOnce(bus(), "twice", "g", handler, options));
  EXPECT_TRUE(lost.lease_lost);
  ASSERT_OK_AND_ASSIGN(GroupInfo before, groups().Describe("twice", "g"));
  EXPECT_EQ(before.cursor.sequence, 0u);
  ASSERT_OK_AND_ASSIGN(ProcessResult again, ProcessOnce(bus(), "twice", "g", handler, options));
  EXPECT_FALSE(again.lease_lost);
  EXPECT_EQ(again.dead_lettered, 1u);
  ASSERT_OK_AND_ASSIGN(DeadLetterPage page,
                       ListDeadLetters(bus(), "twice", Position::Earliest(), 100));
  EXPECT_EQ(page.letters.size(), 1u) << "the second dead letter must be a duplicate";
  ASSERT_OK_AND_ASSIGN(GroupInfo after, groups().Describe("twice", "g"));
  EXPECT_EQ(after.cursor.sequence, 2u);
}

TEST_P(GroupConformanceTest, RepublishPutsTheOriginalBackOnce) {
  Event original = MakeEvent("mail", "mail.send", "to-bob");
  original.attributes["priority"] = "high";
  ASSERT_OK(bus().Publish(original).status());
  std::vector<absl::Duration> waits;
  std::map<uint64_t, int> calls;
  ASSERT_OK(ProcessOnce(bus(), "mail", "sender", FailOn({"to-bob"}, &calls),
                        RecordingOptions(&waits))
                .status());
  ASSERT_OK_AND_ASSIGN(DeadLetterPage page,
                       ListDeadLetters(bus(), "mail", Position::Earliest(), 10));
  ASSERT_EQ(page.letters.size(), 1u);
  const DeadLetter& letter = page.letters[0];

  ASSERT_OK_AND_ASSIGN(Receipt first, Republish(bus(), "mail", letter.cursor.sequence));
  EXPECT_FALSE(first.duplicate);
  EXPECT_EQ(first.sequence, 2u);
  ASSERT_OK_AND_ASSIGN(Receipt second, Republish(bus(), "mail", letter.cursor.sequence));
  EXPECT_TRUE(second.duplicate);
  EXPECT_EQ(second.sequence, first.sequence);

  ASSERT_OK_AND_ASSIGN(std::vector<Event> stored, ReplayStream(replayer(), "mail"));
  ASSERT_EQ(stored.size(), 2u);
  const Event& back = stored[1];
  EXPECT_EQ(back.type, "mail.send");
  EXPECT_EQ(back.payload, "to-bob");
  EXPECT_EQ(back.attributes,
            (std::map<std::string, std::string>{{"priority", "high"},
                                                {kRepublishedFrom, letter.cursor.Encode()}}));
  // The group sees the republished event as a new one.
  calls.clear();
  ASSERT_OK_AND_ASSIGN(ProcessResult result,
                       ProcessOnce(bus(), "mail", "sender", FailOn({}, &calls),
                                   RecordingOptions(&waits)));
  EXPECT_EQ(result.handled, 1u);
  EXPECT_THAT(Republish(bus(), "mail", 7), HasErrorKind(ErrorKind::kNotFound));
}

TEST_P(GroupConformanceTest, ProcessLoopHandlesEverythingUntilStopped) {
  ASSERT_OK(PublishN(bus(), "loop", 25).status());
  ProcessOptions options;
  options.batch = 4;
  options.idle_wait = absl::Milliseconds(5);
  std::atomic<int> handled{0};
  // Sequences seen out of turn: lost, repeated or reordered (one member with
  // a long lease sees each event once, in order).
  std::vector<uint64_t> out_of_turn;
  // All 25 handled, an event out of turn, or the loop ended by itself: the
  // wait ends on the first, so a failure shows at once rather than after
  // the wait's timeout.
  Notification done;
  Notification stop;
  EventHandler handler = [&](const Event& event) {
    const int seen = ++handled;
    if (event.sequence != static_cast<uint64_t>(seen)) {
      out_of_turn.push_back(event.sequence);
      done.Notify();
    } else if (seen == 25) {
      done.Notify();
    }
    return absl::OkStatus();
  };
  absl::Status status;
  std::atomic<bool> returned_early{false};
  std::thread loop([&] {
    status = Process(bus(), "loop", "g", handler, options, stop);
    returned_early = !stop.HasBeenNotified();
    done.Notify();
  });
  EXPECT_TRUE(done.WaitForNotificationWithTimeout(kLongWait));
  stop.Notify();
  loop.join();
  EXPECT_OK(status);
  EXPECT_FALSE(returned_early) << "Process returned before it was stopped";
  EXPECT_THAT(out_of_turn, IsEmpty());
  ASSERT_OK_AND_ASSIGN(GroupInfo info, groups().Describe("loop", "g"));
  EXPECT_EQ(info.lag, 0u);
  EXPECT_EQ(handled.load(), 25);
}

TEST_P(GroupConformanceTest, ProcessRejectsZeroAttempts) {
  ProcessOptions options;
  options.max_attempts = 0;
  EXPECT_THAT(ProcessOnce(bus(), "s", "g", [](const Event&) { return absl::OkStatus(); }, options),
              HasErrorKind(ErrorKind::kInvalidArgument));
}

}  // namespace
}  // namespace keel::conformance
