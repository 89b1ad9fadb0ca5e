// Declared retention (StreamPolicy max_events / max_bytes / max_age and the
// dead-letter stream's bounds) enforced through EventBus::Trim: afterwards
// the stream starts at its oldest retained event, older cursors get a
// retention gap, and nothing newer is lost — also while a publisher keeps
// publishing. Runs for targets with `retention_policies`.
#include <gmock/gmock.h>

#include <atomic>
#include <thread>

#include "keel/core/errors.h"
#include "keel/core/policy_registry.h"
#include "keel/tests/conformance/conformance.h"
#include "keel/tests/conformance/helpers.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::conformance {

void LinkRetentionPolicyTests() {}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(RetentionPolicyConformanceTest);

namespace {

using ::keel::testing::HasErrorKind;

// Calls Trim until it reports no more work; returns the sum.
TrimReport TrimAll(EventBus& bus) {
  TrimReport total;
  for (int round = 0; round < 1000; ++round) {
    absl::StatusOr<TrimReport> report = bus.Trim(4);  // Small budget: many rounds.
    EXPECT_TRUE(report.ok()) << report.status();
    if (!report.ok()) break;
    total.events += report->events;
    total.bytes += report->bytes;
    total.dedupe_keys += report->dedupe_keys;
    if (!report->more) break;
  }
  return total;
}

void Declare(EventBus& bus, absl::string_view stream, absl::string_view policy) {
  absl::StatusOr<StreamPolicy> parsed = StreamPolicy::Parse(policy);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_OK(bus.Declare(stream, *parsed));
}

TEST_P(RetentionPolicyConformanceTest, MaxEventsKeepsTheNewest) {
  ASSERT_NO_FATAL_FAILURE(Declare(bus(), "capped", "max_events=5"));
  ASSERT_OK_AND_ASSIGN(std::vector<Receipt> receipts, PublishN(bus(), "capped", 12));
  TrimAll(bus());
  EXPECT_FALSE(bus().NeedsTrim());
  ASSERT_OK_AND_ASSIGN(StreamInfo info, replayer().Bounds("capped"));
  EXPECT_EQ(info.first_sequence, 8u);
  EXPECT_EQ(info.last_sequence, 12u);
  EXPECT_EQ(info.count, 5u);
  ASSERT_OK_AND_ASSIGN(std::vector<Event> kept, ReplayStream(replayer(), "capped"));
  EXPECT_EQ(Sequences(kept), Range(8, 12));

  ReplayRequest old;
  old.stream = "capped";
  old.after = Position::After(receipts[2].cursor);
  absl::StatusOr<ReplayPage> gap = replayer().Replay(old);
  EXPECT_THAT(gap.status(), HasErrorKind(ErrorKind::kRetentionGap));
  std::optional<RetentionGap> details = GetRetentionGap(gap.status());
  ASSERT_TRUE(details.has_value());
  EXPECT_EQ(details->requested_after, 3u);
  EXPECT_EQ(details->oldest, 8u);
}

TEST_P(RetentionPolicyConformanceTest, MaxBytesBoundsTheRetainedBytes) {
  ASSERT_NO_FATAL_FAILURE(Declare(bus(), "sized", "max_bytes=2000"));
  for (int i = 0; i < 10; ++i) {
    ASSERT_OK(bus().Publish(MakeEvent("sized", "t", std::string(500, 'a' + i))).status());
  }
  TrimAll(bus());
  ASSERT_OK_AND_ASSIGN(StreamInfo info, replayer().Bounds("sized"));
  EXPECT_LE(info.bytes, 2000u);
  EXPECT_GE(info.count, 1u);
  EXPECT_EQ(info.last_sequence, 10u);
  ASSERT_OK_AND_ASSIGN(std::vector<Event> kept, ReplayStream(replayer(), "sized"));
  EXPECT_EQ(Sequences(kept), Range(info.first_sequence, 10));
  uint64_t bytes = 0;
  for (const Event& event : kept) bytes += event.ApproximateSize();
  EXPECT_EQ(bytes, info.bytes);
}

TEST_P(RetentionPolicyConformanceTest, MaxAgeDropsWhatIsOlderThanTheBound) {
  ASSERT_NO_FATAL_FAILURE(Declare(bus(), "aged", "max_age=1m"));
  ASSERT_OK(PublishN(bus(), "aged", 3).status());
  clock().Advance(absl::Seconds(30));
  ASSERT_OK(PublishN(bus(), "aged", 2).status());
  EXPECT_FALSE(bus().NeedsTrim());
  clock().Advance(absl::Seconds(40));  // The first three are 70 s old.
  EXPECT_TRUE(bus().NeedsTrim());
  TrimAll(bus());
  ASSERT_OK_AND_ASSIGN(StreamInfo info, replayer().Bounds("aged"));
  EXPECT_EQ(info.first_sequence, 4u);
  EXPECT_EQ(info.count, 2u);
  clock().Advance(absl::Minutes(1));
  TrimAll(bus());
  ASSERT_OK_AND_ASSIGN(StreamInfo empty, replayer().Bounds("aged"));
  EXPECT_EQ(empty.count, 0u);
  EXPECT_EQ(empty.last_sequence, 5u) << "trimming must not reset the sequence";
  ASSERT_OK_AND_ASSIGN(Receipt next, bus().Publish(MakeEvent("aged")));
  EXPECT_EQ(next.sequence, 6u);
}

TEST_P(RetentionPolicyConformanceTest, DeadLetterStreamsUseTheirOwnBound) {
  ASSERT_NO_FATAL_FAILURE(Declare(bus(), "jobs", "dead_letter.max_events=2"));
  const std::string dlq = DeadLetterStream("jobs");
  ASSERT_OK(PublishN(bus(), dlq, 5).status());
  ASSERT_OK(PublishN(bus(), "jobs", 5).status());
  TrimAll(bus());
  ASSERT_OK_AND_ASSIGN(StreamInfo dead, replayer().Bounds(dlq));
  EXPECT_EQ(dead.count, 2u);
  ASSERT_OK_AND_ASSIGN(StreamInfo live, replayer().Bounds("jobs"));
  EXPECT_EQ(live.count, 5u);
}

TEST_P(RetentionPolicyConformanceTest, TrimKeepsUpWithAContinuousPublisher) {
  ASSERT_NO_FATAL_FAILURE(Declare(bus(), "busy", "max_events=20"));
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> published{0};
  std::thread publisher([&] {
    while (!stop.load()) {
      if (!bus().Publish(MakeEvent("busy")).ok()) return;
      published.fetch_add(1);
    }
  });
  // Every Trim call returns although publishes never pause.
  const absl::Time deadline = absl::Now() + kLongWait;
  while (published.load() < 300 && absl::Now() < deadline) {
    ASSERT_OK(bus().Trim(8).status());
  }
  stop.store(true);
  publisher.join();
  TrimAll(bus());
  ASSERT_OK_AND_ASSIGN(StreamInfo info, replayer().Bounds("busy"));
  EXPECT_EQ(info.last_sequence, published.load());
  ASSERT_GE(info.last_sequence, 300u);
  EXPECT_EQ(info.count, 20u);
  ASSERT_OK_AND_ASSIGN(std::vector<Event> kept, ReplayStream(replayer(), "busy"));
  EXPECT_EQ(Sequences(kept), Range(info.last_sequence - 19, info.last_sequence));
}

}  // namespace
}  // namespace keel::conformance
