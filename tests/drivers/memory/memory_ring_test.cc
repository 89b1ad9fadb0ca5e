// The memory driver's ring bounds: eviction by count and bytes, retention-gap
// errors for cursors older than the ring, and a fresh epoch per instance.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "keel/drivers/memory/memory_bus.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::testing {
namespace {

Event NewEvent(int n, size_t payload_bytes = 10) {
  Event event;
  event.stream = "ring";
  event.type = "test";
  event.payload = std::string(payload_bytes, 'a' + n % 26);
  return event;
}

TEST(MemoryRingTest, EvictsOldestBeyondMaxEvents) {
  auto bus = NewMemoryBus(MemoryRingLimits{5, 1 << 20}, DriverContext{});
  for (int i = 0; i < 12; ++i) ASSERT_OK(bus->Publish(NewEvent(i)));
  ASSERT_OK_AND_ASSIGN(StreamInfo info, bus->replayer()->Bounds("ring"));
  EXPECT_EQ(info.first_sequence, 8u);
  EXPECT_EQ(info.last_sequence, 12u);
  EXPECT_EQ(info.count, 5u);
}

TEST(MemoryRingTest, EvictsOldestBeyondMaxBytesButKeepsTheNewest) {
  auto bus = NewMemoryBus(MemoryRingLimits{1000, 1000}, DriverContext{});
  for (int i = 0; i < 10; ++i) ASSERT_OK(bus->Publish(NewEvent(i, 300)));
  ASSERT_OK_AND_ASSIGN(StreamInfo info, bus->replayer()->Bounds("ring"));
  EXPECT_LE(info.bytes, 1000u);
  EXPECT_EQ(info.last_sequence, 10u);
  EXPECT_GE(info.count, 1u);
  EXPECT_LT(info.count, 10u);
}

TEST(MemoryRingTest, CursorOlderThanTheRingIsARetentionGap) {
  auto bus = NewMemoryBus(MemoryRingLimits{5, 1 << 20}, DriverContext{});
  ASSERT_OK_AND_ASSIGN(Receipt first, bus->Publish(NewEvent(0)));
  for (int i = 1; i < 12; ++i) ASSERT_OK(bus->Publish(NewEvent(i)));
  ReplayRequest request;
  request.stream = "ring";
  request.after = Position::After(first.cursor);
  absl::StatusOr<ReplayPage> page = bus->replayer()->Replay(request);
  EXPECT_THAT(page, HasErrorKind(ErrorKind::kRetentionGap));
  std::optional<RetentionGap> gap = GetRetentionGap(page.status());
  ASSERT_TRUE(gap.has_value());
  EXPECT_EQ(gap->requested_after, 1u);
  EXPECT_EQ(gap->oldest, 8u);
  EXPECT_EQ(gap->missed(), 6u);
}

TEST(MemoryRingTest, EachInstanceHasItsOwnEpoch) {
  auto first = NewMemoryBus(MemoryRingLimits{}, DriverContext{});
  auto second = NewMemoryBus(MemoryRingLimits{}, DriverContext{});
  ASSERT_OK_AND_ASSIGN(Receipt receipt, first->Publish(NewEvent(0)));
  ASSERT_OK(second->Publish(NewEvent(0)));
  EXPECT_NE(first->replayer()->epoch(), second->replayer()->epoch());
  ReplayRequest request;
  request.stream = "ring";
  request.after = Position::After(receipt.cursor);
  EXPECT_THAT(second->replayer()->Replay(request), HasErrorKind(ErrorKind::kCursorMismatch));
}

TEST(MemoryRingTest, RejectsBadLimitOptions) {
  EXPECT_THAT(MemoryRingLimitsFromConfig(Config{{"max_events_per_stream", "0"}}),
              HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(MemoryRingLimitsFromConfig(Config{{"max_bytes_per_stream", "lots"}}),
              HasErrorKind(ErrorKind::kInvalidArgument));
}

}  // namespace
}  // namespace keel::testing
