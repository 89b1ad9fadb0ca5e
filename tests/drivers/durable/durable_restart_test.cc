// A durable bus over LevelDB survives a restart: sequences continue strictly
// above everything handed out before, replay serves the full history, and
// cursors taken before the restart stay valid.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "keel/drivers/builtin_drivers.h"
#include "keel/statestore/state_store.h"
#include "keel/tests/drivers/durable/durable_test_util.h"
#include "keel/tests/testing/file_size_limit.h"
#include "keel/tests/testing/status_matchers.h"
#include "keel/tests/testing/temp_dir.h"

namespace keel::testing {
namespace {

using ::testing::ElementsAreArray;
using ::testing::SizeIs;

class DurableRestartTest : public ::testing::Test {
 protected:
  std::unique_ptr<EventBus> Open(Config config = {}) {
    LinkBuiltinDrivers();
    config.Set("store", "leveldb");
    config.Set("store.path", dir_.Sub("db"));
    absl::StatusOr<std::unique_ptr<EventBus>> bus = CreateBus("durable", config);
    EXPECT_OK(bus);
    return bus.ok() ? std::move(*bus) : nullptr;
  }

  TempDir dir_;
};

TEST_F(DurableRestartTest, SequencesContinueAndReplayServesFullHistory) {
  Cursor before_restart;
  {
    std::unique_ptr<EventBus> bus = Open();
    for (int i = 0; i < 10; ++i) ASSERT_OK(bus->Publish(NewEvent("orders", i)));
    for (int i = 0; i < 5; ++i) ASSERT_OK(bus->Publish(NewEvent("billing", i)));
    ASSERT_OK_AND_ASSIGN(Receipt receipt, bus->Publish(NewEvent("orders", 10)));
    before_restart = receipt.cursor;
    ASSERT_OK(bus->Close());
  }
  std::unique_ptr<EventBus> bus = Open();
  ASSERT_OK_AND_ASSIGN(Receipt next, bus->Publish(NewEvent("orders", 11)));
  EXPECT_EQ(next.sequence, 12u);
  ASSERT_OK_AND_ASSIGN(Receipt billing, bus->Publish(NewEvent("billing", 5)));
  EXPECT_EQ(billing.sequence, 6u);

  ASSERT_OK_AND_ASSIGN(std::vector<Event> orders, ReadAll(*bus, "orders"));
  EXPECT_THAT(Sequences(orders), ElementsAreArray(Range(1, 12)));
  EXPECT_EQ(orders[3].payload, "3");
  EXPECT_EQ(orders[3].type, "test.numbered");

  ReplayRequest request;
  request.stream = "orders";
  request.after = Position::After(before_restart);
  ASSERT_OK_AND_ASSIGN(ReplayPage page, bus->replayer()->Replay(request));
  ASSERT_THAT(page.events, SizeIs(1));
  EXPECT_EQ(page.events[0].sequence, 12u);
}

TEST_F(DurableRestartTest, LateSubscriberAfterRestartSeesEverything) {
  {
    std::unique_ptr<EventBus> bus = Open();
    for (int i = 0; i < 25; ++i) ASSERT_OK(bus->Publish(NewEvent("audit", i)));
  }  // Destroyed without an explicit Close: the destructor closes.
  std::unique_ptr<EventBus> bus = Open();
  ASSERT_OK_AND_ASSIGN(auto follower, bus->Follow("audit", Position::Earliest()));
  std::vector<uint64_t> seen;
  while (seen.size() < 25) {
    ASSERT_OK_AND_ASSIGN(auto events, follower->Next(100, absl::Seconds(10)));
    ASSERT_FALSE(events.empty()) << "follower stalled at " << seen.size();
    for (const EventPtr& event : events) seen.push_back(event->sequence);
  }
  EXPECT_THAT(seen, ElementsAreArray(Range(1, 25)));
}

TEST_F(DurableRestartTest, BoundsAndStreamListSurviveRestart) {
  {
    std::unique_ptr<EventBus> bus = Open();
    for (int i = 0; i < 3; ++i) ASSERT_OK(bus->Publish(NewEvent("a.one", i)));
    ASSERT_OK(bus->Publish(NewEvent("a.two", 0)));
    ASSERT_OK(bus->Publish(NewEvent("b.three", 0)));
  }
  std::unique_ptr<EventBus> bus = Open();
  ASSERT_OK_AND_ASSIGN(StreamInfo info, bus->replayer()->Bounds("a.one"));
  EXPECT_EQ(info.first_sequence, 1u);
  EXPECT_EQ(info.last_sequence, 3u);
  EXPECT_EQ(info.count, 3u);
  EXPECT_GT(info.bytes, 0u);
  ASSERT_OK_AND_ASSIGN(std::vector<StreamInfo> streams, bus->replayer()->ListStreams("a.", 10));
  ASSERT_THAT(streams, SizeIs(2));
  EXPECT_EQ(streams[0].stream, "a.one");
  EXPECT_EQ(streams[1].stream, "a.two");
}

// A store write that fails leaves LevelDB taking no more (leveldb_store.h):
// the bus goes on serving what it has and says why publishes fail, and a
// restart takes publishes again, in a new epoch.
TEST_F(DurableRestartTest, AFailedStoreWriteDegradesTheBusUntilARestart) {
  const Config config{{"sync", "none"}, {"store.preallocate_log", "false"}};
  uint64_t epoch = 0;
  {
    std::unique_ptr<EventBus> bus = Open(config);
    ASSERT_OK_AND_ASSIGN(Receipt first, bus->Publish(NewEvent("orders", 0)));
    epoch = first.cursor.epoch;
    EXPECT_EQ(bus->DegradedReason(), "");
    {
      ScopedFileSizeLimit cap(NewestLogBytes(dir_.Sub("db")) + 8);
      EXPECT_FALSE(bus->Publish(NewEvent("orders", 1)).ok());
    }
    EXPECT_THAT(bus->Publish(NewEvent("orders", 2)), HasErrorKind(ErrorKind::kUnavailable));
    EXPECT_THAT(bus->DegradedReason(), ::testing::HasSubstr("the store takes no writes"));
    ASSERT_OK_AND_ASSIGN(StreamInfo info, bus->replayer()->Bounds("orders"));
    EXPECT_EQ(info.last_sequence, 1u);
    bus->Close().IgnoreError();  // Its checkpoint cannot be written either.
  }
  std::unique_ptr<EventBus> bus = Open(config);
  EXPECT_EQ(bus->DegradedReason(), "");
  ASSERT_OK_AND_ASSIGN(Receipt receipt, bus->Publish(NewEvent("orders", 3)));
  EXPECT_EQ(receipt.sequence, 2u);
  // The failure ended the store's lifetime (a failed sync may have cost
  // acknowledged events), so the open after it started a new epoch.
  EXPECT_NE(receipt.cursor.epoch, epoch);
}

}  // namespace
}  // namespace keel::testing
