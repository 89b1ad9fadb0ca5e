// Policies: stream declarations (no-op when equal, resource_drift when not),
// per-stream payload limits, idempotency keys within the dedupe window,
// expected last sequence, non-decreasing publish times with PositionAtTime,
// and the tenant watermark. The bus runs on a ManualClock.
#include <gmock/gmock.h>

#include <string>
#include <vector>

#include "keel/core/errors.h"
#include "keel/core/policy_registry.h"
#include "keel/core/topic.h"
#include "keel/tests/conformance/conformance.h"
#include "keel/tests/conformance/helpers.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::conformance {

void LinkPolicyTests() {}

namespace {

using ::keel::testing::HasErrorKind;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

StreamPolicy Parsed(absl::string_view text) {
  absl::StatusOr<StreamPolicy> policy = StreamPolicy::Parse(text);
  EXPECT_TRUE(policy.ok()) << policy.status();
  return policy.ok() ? *policy : StreamPolicy{};
}

Event Keyed(absl::string_view stream, absl::string_view key, absl::string_view payload = "") {
  Event event = MakeEvent(stream, "test.event", payload);
  event.idempotency_key = std::string(key);
  return event;
}

TEST_P(PolicyConformanceTest, RedeclaringIsANoOpAndDifferentSettingsAreDrift) {
  const StreamPolicy policy = Parsed("max_events=100 dedupe_window=5m");
  ASSERT_OK(bus().Declare("orders", policy));
  ASSERT_OK(bus().Declare("orders", policy));
  absl::Status drift = bus().Declare("orders", Parsed("max_events=200 dedupe_window=1m"));
  EXPECT_THAT(drift, HasErrorKind(ErrorKind::kResourceDrift));
  EXPECT_THAT(std::string(drift.message()), HasSubstr("max_events, dedupe_window"));
  ASSERT_OK_AND_ASSIGN(StreamPolicy in_force, bus().PolicyOf("orders"));
  EXPECT_EQ(in_force, policy);
  ASSERT_OK_AND_ASSIGN(std::vector<StreamDeclaration> declared, bus().Declarations());
  ASSERT_EQ(declared.size(), 1u);
  EXPECT_EQ(declared[0].stream, "orders");
}

TEST_P(PolicyConformanceTest, UndeclaredStreamsGetDefaultsAndPartitionsInheritTheTopic) {
  ASSERT_OK_AND_ASSIGN(StreamPolicy plain, bus().PolicyOf("never.declared"));
  EXPECT_EQ(plain, StreamPolicy{});
  ASSERT_OK(bus().Declare("clicks", Parsed("partitions=4 max_events=10")));
  ASSERT_OK_AND_ASSIGN(StreamPolicy partition, bus().PolicyOf("clicks:3"));
  EXPECT_EQ(partition.retention.max_events, 10u);
  EXPECT_EQ(partition.partitions, 0u);
  ASSERT_OK_AND_ASSIGN(StreamPolicy outside, bus().PolicyOf("clicks:4"));
  EXPECT_EQ(outside, StreamPolicy{});
  EXPECT_THAT(bus().Declare("clicks", Parsed("partitions=8 max_events=10")),
              HasErrorKind(ErrorKind::kResourceDrift));
}

TEST_P(PolicyConformanceTest, DeclaredPayloadLimitApplies) {
  ASSERT_OK(bus().Declare("small", Parsed("max_payload_bytes=2KiB")));
  Event big = MakeEvent("small", "t", std::string(3000, 'x'));
  EXPECT_THAT(bus().Publish(big).status(), HasErrorKind(ErrorKind::kPayloadTooLarge));
  ASSERT_OK_AND_ASSIGN(Receipt receipt, bus().Publish(MakeEvent("small", "t", "fits")));
  EXPECT_EQ(receipt.sequence, 1u) << "the refused event consumed a sequence";
  // Other streams keep the default limit.
  EXPECT_OK(bus().Publish(MakeEvent("other", "t", std::string(3000, 'x'))).status());
}

TEST_P(PolicyConformanceTest, IdempotentRetryReturnsTheOriginalReceipt) {
  ASSERT_OK_AND_ASSIGN(Receipt first, bus().Publish(Keyed("pay", "k1", "a")));
  ASSERT_OK_AND_ASSIGN(Receipt again, bus().Publish(Keyed("pay", "k1", "b")));
  EXPECT_FALSE(first.duplicate);
  EXPECT_TRUE(again.duplicate);
  EXPECT_EQ(again.sequence, first.sequence);
  EXPECT_EQ(again.id, first.id);
  EXPECT_EQ(again.cursor, first.cursor);
  ASSERT_OK_AND_ASSIGN(std::vector<Event> stored, ReplayStream(replayer(), "pay"));
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].payload, "a");
  // Keys are per stream.
  ASSERT_OK_AND_ASSIGN(Receipt elsewhere, bus().Publish(Keyed("refund", "k1")));
  EXPECT_FALSE(elsewhere.duplicate);
}

TEST_P(PolicyConformanceTest, ABatchIsDeduplicatedPerEvent) {
  ASSERT_OK_AND_ASSIGN(Receipt earlier, bus().Publish(Keyed("b", "old")));
  std::vector<Event> batch = {Keyed("b", "new-1"), Keyed("b", "old"), MakeEvent("b"),
                              Keyed("b", "new-1")};
  ASSERT_OK_AND_ASSIGN(std::vector<Receipt> receipts, bus().PublishBatch("b", batch));
  ASSERT_EQ(receipts.size(), 4u);
  EXPECT_FALSE(receipts[0].duplicate);
  EXPECT_EQ(receipts[0].sequence, 2u);
  EXPECT_TRUE(receipts[1].duplicate);
  EXPECT_EQ(receipts[1].sequence, earlier.sequence);
  EXPECT_FALSE(receipts[2].duplicate);
  EXPECT_EQ(receipts[2].sequence, 3u);
  EXPECT_TRUE(receipts[3].duplicate);
  EXPECT_EQ(receipts[3].sequence, 2u);
  EXPECT_EQ(receipts[3].id, receipts[0].id);
  ASSERT_OK_AND_ASSIGN(std::vector<Event> stored, ReplayStream(replayer(), "b"));
  EXPECT_THAT(Sequences(stored), ElementsAre(1, 2, 3));
}

TEST_P(PolicyConformanceTest, KeysAreForgottenExactlyAtTheWindowEdge) {
  ASSERT_OK(bus().Declare("w", Parsed("dedupe_window=2m")));
  ASSERT_OK_AND_ASSIGN(Receipt first, bus().Publish(Keyed("w", "k")));
  clock().Advance(absl::Minutes(2) - absl::Nanoseconds(1));
  ASSERT_OK_AND_ASSIGN(Receipt inside, bus().Publish(Keyed("w", "k")));
  EXPECT_TRUE(inside.duplicate);
  clock().Advance(absl::Nanoseconds(1));
  ASSERT_OK_AND_ASSIGN(Receipt after, bus().Publish(Keyed("w", "k")));
  EXPECT_FALSE(after.duplicate);
  EXPECT_EQ(after.sequence, first.sequence + 1);
  // The new publish opened a new window for the key.
  ASSERT_OK_AND_ASSIGN(Receipt retry, bus().Publish(Keyed("w", "k")));
  EXPECT_TRUE(retry.duplicate);
  EXPECT_EQ(retry.sequence, after.sequence);
}

TEST_P(PolicyConformanceTest, ExpiredKeysAreCollectedByTrim) {
  ASSERT_OK(bus().Declare("gc", Parsed("dedupe_window=1m")));
  ASSERT_OK(bus().Publish(Keyed("gc", "a")).status());
  ASSERT_OK(bus().Publish(Keyed("gc", "b")).status());
  clock().Advance(absl::Minutes(1));
  if (GetParam().retention_policies) {
    EXPECT_TRUE(bus().NeedsTrim());
    ASSERT_OK_AND_ASSIGN(TrimReport report, bus().Trim(1000));
    EXPECT_EQ(report.dedupe_keys, 2u);
    EXPECT_FALSE(bus().NeedsTrim());
  }
  ASSERT_OK_AND_ASSIGN(Receipt again, bus().Publish(Keyed("gc", "a")));
  EXPECT_FALSE(again.duplicate);
}

TEST_P(PolicyConformanceTest, ZeroWindowDisablesDedupe) {
  ASSERT_OK(bus().Declare("nodedupe", Parsed("dedupe_window=0s")));
  ASSERT_OK(bus().Publish(Keyed("nodedupe", "k")).status());
  ASSERT_OK_AND_ASSIGN(Receipt second, bus().Publish(Keyed("nodedupe", "k")));
  EXPECT_FALSE(second.duplicate);
  EXPECT_EQ(second.sequence, 2u);
}

TEST_P(PolicyConformanceTest, ExpectedLastSequenceGuardsTheAppend) {
  PublishOptions on_empty;
  on_empty.expected_last_sequence = 0;
  ASSERT_OK_AND_ASSIGN(Receipt first, bus().Publish(MakeEvent("occ"), on_empty));
  EXPECT_EQ(first.sequence, 1u);

  PublishOptions stale;
  stale.expected_last_sequence = 0;
  absl::StatusOr<Receipt> refused = bus().Publish(MakeEvent("occ"), stale);
  EXPECT_THAT(refused.status(), HasErrorKind(ErrorKind::kConflict));
  std::optional<ConflictInfo> conflict = GetConflict(refused.status());
  ASSERT_TRUE(conflict.has_value());
  EXPECT_EQ(conflict->expected, 0u);
  EXPECT_EQ(conflict->actual, 1u);

  PublishOptions current;
  current.expected_last_sequence = 1;
  std::vector<Event> batch = {MakeEvent("occ"), MakeEvent("occ")};
  ASSERT_OK_AND_ASSIGN(std::vector<Receipt> receipts,
                       bus().PublishBatch("occ", batch, current));
  EXPECT_THAT(Sequences(receipts), ElementsAre(2, 3));
  ASSERT_OK_AND_ASSIGN(StreamInfo info, replayer().Bounds("occ"));
  EXPECT_EQ(info.last_sequence, 3u) << "the refused publish appended";
}

TEST_P(PolicyConformanceTest, ARetriedConditionalPublishGetsItsReceiptNotAConflict) {
  PublishOptions options;
  options.expected_last_sequence = 0;
  ASSERT_OK_AND_ASSIGN(Receipt first, bus().Publish(Keyed("retry", "once"), options));
  ASSERT_OK_AND_ASSIGN(Receipt retried, bus().Publish(Keyed("retry", "once"), options));
  EXPECT_TRUE(retried.duplicate);
  EXPECT_EQ(retried.sequence, first.sequence);
}

TEST_P(PolicyConformanceTest, PublishTimesNeverGoBackwardsWithinAStream) {
  ASSERT_OK_AND_ASSIGN(Receipt first, bus().Publish(MakeEvent("t")));
  clock().Advance(-absl::Seconds(30));  // The clock steps back.
  ASSERT_OK_AND_ASSIGN(Receipt second, bus().Publish(MakeEvent("t")));
  ASSERT_OK_AND_ASSIGN(std::vector<Event> stored, ReplayStream(replayer(), "t"));
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_LE(stored[0].time, stored[1].time);
  (void)first;
  (void)second;
}

TEST_P(PolicyConformanceTest, PositionAtTimeStartsAtTheFirstEventAtOrAfterIt) {
  const absl::Time start = clock().Now();
  for (int i = 0; i < 10; ++i) {
    ASSERT_OK(bus().Publish(MakeEvent("timed", "t", absl::StrCat(i))).status());
    clock().Advance(absl::Seconds(1));
  }
  // Event i was published at start + i s.
  ASSERT_OK_AND_ASSIGN(Position at4, PositionAtTime(replayer(), "timed", start + absl::Seconds(4)));
  ReplayRequest request;
  request.stream = "timed";
  request.after = at4;
  ASSERT_OK_AND_ASSIGN(std::vector<Event> from4, ReplayAll(replayer(), request));
  EXPECT_THAT(Sequences(from4), ::testing::ElementsAreArray(Range(5, 10)));

  ASSERT_OK_AND_ASSIGN(Position between,
                       PositionAtTime(replayer(), "timed", start + absl::Milliseconds(4500)));
  request.after = between;
  ASSERT_OK_AND_ASSIGN(std::vector<Event> from5, ReplayAll(replayer(), request));
  EXPECT_EQ(from5.front().sequence, 6u);

  ASSERT_OK_AND_ASSIGN(Position before, PositionAtTime(replayer(), "timed", start - absl::Hours(1)));
  request.after = before;
  ASSERT_OK_AND_ASSIGN(std::vector<Event> all, ReplayAll(replayer(), request));
  EXPECT_EQ(all.size(), 10u);

  ASSERT_OK_AND_ASSIGN(Position future, PositionAtTime(replayer(), "timed", start + absl::Hours(1)));
  request.after = future;
  ASSERT_OK_AND_ASSIGN(std::vector<Event> none, ReplayAll(replayer(), request));
  EXPECT_TRUE(none.empty());
}

TEST_P(PolicyConformanceTest, AnIdleTenantsWatermarkFollowsTheHead) {
  Event ours = MakeEvent("shared");
  ours.tenant = "acme";
  ASSERT_OK(bus().Publish(ours).status());
  for (int i = 0; i < 5; ++i) {
    Event theirs = MakeEvent("shared");
    theirs.tenant = "globex";
    ASSERT_OK(bus().Publish(theirs).status());
  }
  ASSERT_OK_AND_ASSIGN(Cursor watermark, LatestCursor(replayer(), "shared", "acme"));
  EXPECT_EQ(watermark.sequence, 6u);
  // A filtered read reports the same watermark as its resume position, and
  // resuming there misses nothing of the tenant.
  ReplayRequest request;
  request.stream = "shared";
  request.after = Position::Earliest();
  request.filter.tenant = "acme";
  ASSERT_OK_AND_ASSIGN(ReplayPage page, replayer().Replay(request));
  ASSERT_EQ(page.events.size(), 1u);
  EXPECT_EQ(page.next, watermark);
  Event later = MakeEvent("shared");
  later.tenant = "acme";
  ASSERT_OK(bus().Publish(later).status());
  request.after = Position::After(watermark);
  ASSERT_OK_AND_ASSIGN(ReplayPage next, replayer().Replay(request));
  EXPECT_THAT(Sequences(next.events), ElementsAre(7));
}

TEST_P(PolicyConformanceTest, TopicPublishesSplitByPartitionAndFailPerPart) {
  ASSERT_OK(bus().Declare("orders", Parsed("partitions=3 max_payload_bytes=2KiB")));
  std::vector<std::string> keys;
  std::vector<Event> events;
  for (int i = 0; i < 12; ++i) {
    keys.push_back(absl::StrCat("customer-", i % 5));
    events.push_back(MakeEvent("", "order.created", absl::StrCat(i)));
  }
  // One oversized event fails its partition's part, and only that part.
  const uint32_t failing = PartitionOf(keys[4], 3);
  events[4].payload = std::string(4096, 'x');
  ASSERT_OK_AND_ASSIGN(auto results, PublishToTopic(bus(), "orders", events, keys));
  ASSERT_EQ(results.size(), events.size());
  for (size_t i = 0; i < results.size(); ++i) {
    SCOPED_TRACE(i);
    const uint32_t partition = PartitionOf(keys[i], 3);
    if (partition == failing) {
      EXPECT_THAT(results[i].status(), HasErrorKind(ErrorKind::kPayloadTooLarge));
      continue;
    }
    ASSERT_OK(results[i].status());
    EXPECT_EQ(results[i]->stream, PartitionStream("orders", partition));
  }
  for (uint32_t partition = 0; partition < 3; ++partition) {
    const std::string stream = PartitionStream("orders", partition);
    ASSERT_OK_AND_ASSIGN(std::vector<Event> stored, ReplayStream(replayer(), stream));
    std::vector<std::string> payloads;
    for (const Event& event : stored) payloads.push_back(event.payload);
    std::vector<std::string> expected;
    for (size_t i = 0; i < events.size(); ++i) {
      if (partition != failing && PartitionOf(keys[i], 3) == partition) {
        expected.push_back(events[i].payload);
      }
    }
    EXPECT_EQ(payloads, expected) << stream << ": batch order within the partition";
  }
}

TEST_P(PolicyConformanceTest, TopicPublishesNeedADeclaredTopicAndKeys) {
  std::vector<Event> one = {MakeEvent("")};
  EXPECT_THAT(PublishToTopic(bus(), "plain", one, {"k"}).status(),
              HasErrorKind(ErrorKind::kNotFound));
  ASSERT_OK(bus().Declare("t", Parsed("partitions=2")));
  EXPECT_THAT(PublishToTopic(bus(), "t", one, {""}).status(),
              HasErrorKind(ErrorKind::kInvalidArgument));
  ASSERT_OK_AND_ASSIGN(std::vector<StreamInfo> streams, replayer().ListStreams("t", 10));
  EXPECT_TRUE(streams.empty()) << "a refused topic publish stored something";
}

}  // namespace
}  // namespace keel::conformance
