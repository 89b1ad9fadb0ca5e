// Stream policies of the durable driver survive a restart: declarations,
// the idempotency index (a retry after a restart is still a duplicate, and
// the window is still measured from the first publish), trimmed bounds, and
// non-decreasing publish times.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "keel/tests/drivers/durable/durable_restart_fixture.h"
#include "keel/tests/drivers/durable/durable_test_util.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::testing {
namespace {

class DurablePolicyRestartTest : public DurableRestartTest {
 protected:
  static StreamPolicy Policy(absl::string_view text) { return *StreamPolicy::Parse(text); }

  static Event Keyed(absl::string_view stream, absl::string_view key, int n) {
    Event event = NewEvent(stream, n);
    event.idempotency_key = std::string(key);
    return event;
  }
};

TEST_F(DurablePolicyRestartTest, DeclarationsSurvive) {
  {
    std::unique_ptr<EventBus> bus = Open();
    ASSERT_OK(bus->Declare("orders", Policy("max_events=7 partitions=3")));
  }
  std::unique_ptr<EventBus> bus = Open();
  ASSERT_OK_AND_ASSIGN(StreamPolicy policy, bus->PolicyOf("orders:2"));
  EXPECT_EQ(policy.retention.max_events, 7u);
  EXPECT_OK(bus->Declare("orders", Policy("max_events=7 partitions=3")));
  EXPECT_THAT(bus->Declare("orders", Policy("max_events=7 partitions=4")),
              HasErrorKind(ErrorKind::kResourceDrift));
}

TEST_F(DurablePolicyRestartTest, ARetryAfterARestartIsStillADuplicate) {
  Receipt first;
  {
    std::unique_ptr<EventBus> bus = Open();
    ASSERT_OK_AND_ASSIGN(first, bus->Publish(Keyed("pay", "charge-1", 1)));
  }
  clock_.Advance(absl::Minutes(1));
  {
    std::unique_ptr<EventBus> bus = Open();
    ASSERT_OK_AND_ASSIGN(Receipt retry, bus->Publish(Keyed("pay", "charge-1", 1)));
    EXPECT_TRUE(retry.duplicate);
    EXPECT_EQ(retry.sequence, first.sequence);
    EXPECT_EQ(retry.id, first.id);
  }
  // The default window (2 min) counts from the first publish, not the retry.
  clock_.Advance(absl::Minutes(1));
  std::unique_ptr<EventBus> bus = Open();
  EXPECT_TRUE(bus->NeedsTrim());
  ASSERT_OK_AND_ASSIGN(TrimReport report, bus->Trim(100));
  EXPECT_EQ(report.dedupe_keys, 1u);
  ASSERT_OK_AND_ASSIGN(Receipt fresh, bus->Publish(Keyed("pay", "charge-1", 1)));
  EXPECT_FALSE(fresh.duplicate);
  EXPECT_EQ(fresh.sequence, 2u);
}

TEST_F(DurablePolicyRestartTest, TrimmedBoundsSurviveAndSequencesContinue) {
  {
    std::unique_ptr<EventBus> bus = Open();
    ASSERT_OK(bus->Declare("log", Policy("max_events=3")));
    for (int i = 0; i < 10; ++i) ASSERT_OK(bus->Publish(NewEvent("log", i)));
    ASSERT_OK_AND_ASSIGN(TrimReport report, bus->Trim(100));
    EXPECT_EQ(report.events, 7u);
    EXPECT_FALSE(bus->NeedsTrim());
  }
  std::unique_ptr<EventBus> bus = Open();
  ASSERT_OK_AND_ASSIGN(StreamInfo info, bus->replayer()->Bounds("log"));
  EXPECT_EQ(info.first_sequence, 8u);
  EXPECT_EQ(info.count, 3u);
  ASSERT_OK_AND_ASSIGN(std::vector<Event> kept, ReadAll(*bus, "log"));
  EXPECT_EQ(Sequences(kept), Range(8, 10));
  ASSERT_OK_AND_ASSIGN(Receipt next, bus->Publish(NewEvent("log", 10)));
  EXPECT_EQ(next.sequence, 11u);
}

TEST_F(DurablePolicyRestartTest, PublishTimesStayOrderedAcrossARestart) {
  {
    std::unique_ptr<EventBus> bus = Open();
    ASSERT_OK(bus->Publish(NewEvent("t", 0)));
  }
  clock_.Advance(-absl::Hours(1));  // The restarted host's clock is behind.
  std::unique_ptr<EventBus> bus = Open();
  ASSERT_OK(bus->Publish(NewEvent("t", 1)));
  ASSERT_OK_AND_ASSIGN(std::vector<Event> events, ReadAll(*bus, "t"));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_LE(events[0].time, events[1].time);
}

}  // namespace
}  // namespace keel::testing
