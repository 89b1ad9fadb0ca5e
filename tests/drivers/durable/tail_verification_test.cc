// Stream tails are checked after open, not during it: the first operation on
// a stream, or the background sweep, repairs a lagging head or finds a
// corrupt tail, which then fails every operation on that stream.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "keel/core/logger.h"
#include "keel/drivers/durable/key_layout.h"
#include "keel/statestore/fault_injecting_store.h"
#include "keel/statestore/memory/memory_store.h"
#include "keel/tests/drivers/durable/durable_test_util.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::testing {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

class TailVerificationTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::unique_ptr<EventBus>> Open(bool sweep) {
    DriverContext context;
    context.logger = logger_;
    DurableOptions options = Options();
    options.verify_in_background = sweep;
    return OpenDurableBus(store_, options, context);
  }

  // Writes `count` events to each stream, then closes the bus.
  void Populate(std::initializer_list<absl::string_view> streams, int count) {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(/*sweep=*/false));
    for (absl::string_view stream : streams) {
      for (int i = 0; i < count; ++i) ASSERT_OK(bus->Publish(NewEvent(stream, i)));
    }
    ASSERT_OK(bus->Close());
    store_->Reopen();
  }

  // Entries 4 and 5 of "orders" without their head (which says next = 4).
  void AddOrphanEntries() { ASSERT_OK(WriteEntries(*store_, "orders", {4, 5})); }

  // Waits for a log line of the sweep (the test's timeout bounds the wait).
  void AwaitLog(LogLevel level, absl::string_view fragment) {
    while (!logger_->Contains(level, fragment)) absl::SleepFor(absl::Milliseconds(1));
  }

  std::shared_ptr<FaultInjectingStore> store_ =
      std::make_shared<FaultInjectingStore>(std::make_unique<MemoryStore>());
  std::shared_ptr<CapturingLogger> logger_ = std::make_shared<CapturingLogger>();
};

TEST_F(TailVerificationTest, OpenDoesNotReadEntries) {
  Populate({"orders"}, 3);
  store_->CorruptReadsOf(durable::EntryKey("orders", 3));
  ASSERT_OK_AND_ASSIGN(auto bus, Open(/*sweep=*/false));
  EXPECT_FALSE(logger_->Contains(LogLevel::kError, "orders"));
  // Had the open read the damaged tail, the stream would stay failed (a
  // failed check sticks); repaired now, its first use verifies and works.
  store_->ClearCorruptReads();
  ASSERT_OK_AND_ASSIGN(Receipt next, bus->Publish(NewEvent("orders", 4)));
  EXPECT_EQ(next.sequence, 4u);
}

TEST_F(TailVerificationTest, LaggingHeadIsRepairedOnFirstPublish) {
  Populate({"orders"}, 3);
  AddOrphanEntries();
  ASSERT_OK_AND_ASSIGN(auto bus, Open(/*sweep=*/false));
  EXPECT_FALSE(logger_->Contains(LogLevel::kInfo, "caught up"));
  ASSERT_OK_AND_ASSIGN(Receipt next, bus->Publish(NewEvent("orders", 5)));
  EXPECT_EQ(next.sequence, 6u);
  EXPECT_TRUE(logger_->Contains(LogLevel::kInfo, "caught up the head of stream 'orders'"));
  ASSERT_OK_AND_ASSIGN(std::vector<Event> all, ReadAll(*bus, "orders"));
  EXPECT_THAT(Sequences(all), ElementsAreArray(Range(1, 6)));
}

TEST_F(TailVerificationTest, LaggingHeadIsRepairedOnFirstReplayAndBounds) {
  Populate({"orders"}, 3);
  AddOrphanEntries();
  ASSERT_OK_AND_ASSIGN(auto bus, Open(/*sweep=*/false));
  ASSERT_OK_AND_ASSIGN(std::vector<Event> all, ReadAll(*bus, "orders"));
  EXPECT_THAT(Sequences(all), ElementsAreArray(Range(1, 5)));
  ASSERT_OK_AND_ASSIGN(StreamInfo info, bus->replayer()->Bounds("orders"));
  EXPECT_EQ(info.last_sequence, 5u);
}

TEST_F(TailVerificationTest, SweepRepairsLaggingHeadInTheStore) {
  Populate({"orders"}, 3);
  AddOrphanEntries();
  ASSERT_OK_AND_ASSIGN(auto bus, Open(/*sweep=*/true));
  AwaitLog(LogLevel::kInfo, "caught up the head of stream 'orders'");
  ASSERT_OK_AND_ASSIGN(std::string value, store_->Get(durable::HeadKey("orders")));
  ASSERT_OK_AND_ASSIGN(durable::Head head, durable::DecodeHead(value));
  EXPECT_EQ(head.next, 6u);
  ASSERT_OK_AND_ASSIGN(Receipt next, bus->Publish(NewEvent("orders", 5)));
  EXPECT_EQ(next.sequence, 6u);
}

// An unsynced crash lost sequence 5 and kept 6 and 7: the head catches up
// to 4 only and 6 and 7 are dropped, so that the stream has no hole a
// reader would skip silently. The next publish is 5.
TEST_F(TailVerificationTest, EntriesAfterAHoleAreDropped) {
  Populate({"orders"}, 3);
  ASSERT_OK(WriteEntries(*store_, "orders", {4, 6, 7}));
  ASSERT_OK_AND_ASSIGN(auto bus, Open(/*sweep=*/false));
  ASSERT_OK_AND_ASSIGN(StreamInfo info, bus->replayer()->Bounds("orders"));
  EXPECT_EQ(info.last_sequence, 4u);
  EXPECT_TRUE(logger_->Contains(LogLevel::kWarn, "lost sequences 5..5 but kept 6..7"));
  ASSERT_OK_AND_ASSIGN(Receipt next, bus->Publish(NewEvent("orders", 500)));
  EXPECT_EQ(next.sequence, 5u);
  ASSERT_OK_AND_ASSIGN(std::vector<Event> all, ReadAll(*bus, "orders"));
  EXPECT_THAT(Sequences(all), ElementsAreArray(Range(1, 5)));
  EXPECT_EQ(all.back().payload, "500");
  EXPECT_THAT(store_->Get(durable::EntryKey("orders", 6)), StatusIs(absl::StatusCode::kNotFound));
}

// The sweep writes the same repair: the head and the drops, in one write.
TEST_F(TailVerificationTest, SweepDropsEntriesAfterAHoleInTheStore) {
  Populate({"orders"}, 3);
  ASSERT_OK(WriteEntries(*store_, "orders", {5, 6}));
  ASSERT_OK_AND_ASSIGN(auto bus, Open(/*sweep=*/true));
  AwaitLog(LogLevel::kWarn, "dropped those 2 entries");
  ASSERT_OK_AND_ASSIGN(std::string value, store_->Get(durable::HeadKey("orders")));
  ASSERT_OK_AND_ASSIGN(durable::Head head, durable::DecodeHead(value));
  EXPECT_EQ(head.next, 4u);
  for (uint64_t dropped : {5, 6}) {
    EXPECT_THAT(store_->Get(durable::EntryKey("orders", dropped)),
                StatusIs(absl::StatusCode::kNotFound));
  }
}

// A damaged entry after a hole is damage, not a lost write: the stream
// fails naming it, and nothing is dropped.
TEST_F(TailVerificationTest, ACorruptEntryAfterAHoleFailsTheStream) {
  Populate({"orders"}, 3);
  ASSERT_OK(WriteEntries(*store_, "orders", {5, 6}));
  store_->CorruptReadsOf(durable::EntryKey("orders", 5));
  ASSERT_OK_AND_ASSIGN(auto bus, Open(/*sweep=*/false));
  absl::StatusOr<Receipt> receipt = bus->Publish(NewEvent("orders", 4));
  EXPECT_THAT(receipt, StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(std::string(receipt.status().message()), HasSubstr("Eorders/5"));
  store_->ClearCorruptReads();
  EXPECT_OK(store_->Get(durable::EntryKey("orders", 6)).status());
}

// A stream trimmed to nothing still knows its next sequence: an entry after
// it that skips one follows a hole too.
TEST_F(TailVerificationTest, AHoleAfterAStreamTrimmedToNothingIsDropped) {
  Populate({"orders"}, 3);
  WriteBatch trimmed;
  for (uint64_t seq : {1, 2, 3}) trimmed.Delete(durable::EntryKey("orders", seq));
  durable::Head empty;
  empty.first = 4;
  empty.next = 4;
  trimmed.Put(durable::HeadKey("orders"), durable::EncodeHead(empty));
  ASSERT_OK(store_->Write(trimmed, WriteOptions{.sync = true}));
  ASSERT_OK(WriteEntries(*store_, "orders", {5, 6}));
  ASSERT_OK_AND_ASSIGN(auto bus, Open(/*sweep=*/false));
  ASSERT_OK_AND_ASSIGN(Receipt next, bus->Publish(NewEvent("orders", 400)));
  EXPECT_EQ(next.sequence, 4u);
  ASSERT_OK_AND_ASSIGN(std::vector<Event> all, ReadAll(*bus, "orders"));
  EXPECT_THAT(Sequences(all), ElementsAreArray(Range(4, 4)));
}

TEST_F(TailVerificationTest, CorruptLastEntryFailsTheStreamNamingTheKey) {
  Populate({"orders", "other"}, 3);
  store_->CorruptReadsOf(durable::EntryKey("orders", 3));
  ASSERT_OK_AND_ASSIGN(auto bus, Open(/*sweep=*/false));
  absl::StatusOr<Receipt> receipt = bus->Publish(NewEvent("orders", 3));
  EXPECT_THAT(receipt, StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(std::string(receipt.status().message()), HasSubstr("Eorders/3"));
  // Every later operation fails the same way; other streams are unaffected.
  EXPECT_THAT(bus->replayer()->Bounds("orders"), StatusIs(absl::StatusCode::kDataLoss));
  ASSERT_OK_AND_ASSIGN(Receipt other, bus->Publish(NewEvent("other", 3)));
  EXPECT_EQ(other.sequence, 4u);
}

TEST_F(TailVerificationTest, SweepFindsCorruptionBeforeAnyOperation) {
  Populate({"orders", "other"}, 3);
  store_->CorruptReadsOf(durable::EntryKey("orders", 3));
  ASSERT_OK_AND_ASSIGN(auto bus, Open(/*sweep=*/true));
  AwaitLog(LogLevel::kError, "stream 'orders' is unreadable");
  store_->ClearCorruptReads();  // The sweep's verdict stands: no second look.
  absl::StatusOr<std::vector<Event>> all = ReadAll(*bus, "orders");
  EXPECT_THAT(all, StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(std::string(all.status().message()), HasSubstr("Eorders/3"));
  EXPECT_THAT(bus->Publish(NewEvent("orders", 3)), StatusIs(absl::StatusCode::kDataLoss));
  ASSERT_OK_AND_ASSIGN(std::vector<Event> other, ReadAll(*bus, "other"));
  EXPECT_THAT(Sequences(other), ElementsAreArray(Range(1, 3)));
}

TEST_F(TailVerificationTest, HeadClaimingMissingEntriesFailsTheStream) {
  Populate({"orders"}, 3);
  WriteBatch loss;
  loss.Delete(durable::EntryKey("orders", 3));
  ASSERT_OK(store_->Write(loss, WriteOptions{.sync = true}));
  ASSERT_OK_AND_ASSIGN(auto bus, Open(/*sweep=*/false));
  absl::StatusOr<StreamInfo> info = bus->replayer()->Bounds("orders");
  EXPECT_THAT(info, StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(std::string(info.status().message()), HasSubstr("Horders"));
}

TEST_F(TailVerificationTest, CloseLeavesNoSweepRunning) {
  std::vector<std::string> names;
  for (int i = 0; i < 200; ++i) names.push_back("s" + std::to_string(i));
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(/*sweep=*/false));
    for (const std::string& name : names) ASSERT_OK(bus->Publish(NewEvent(name, 0)));
  }
  store_->Reopen();
  // Every head lags one entry, so the sweep writes a repair for each stream.
  WriteBatch orphans;
  for (const std::string& name : names) {
    Event event = NewEvent(name, 1);
    event.time = absl::Now();
    orphans.Put(durable::EntryKey(name, 2), durable::EncodeEntry(event));
  }
  ASSERT_OK(store_->Write(orphans, WriteOptions{.sync = true}));
  ASSERT_OK_AND_ASSIGN(auto bus, Open(/*sweep=*/true));
  ASSERT_OK(bus->Close());  // Joins the sweep wherever it is.
  const uint64_t writes_at_close = store_->writes();
  absl::SleepFor(absl::Milliseconds(100));  // A sweep still running would write meanwhile.
  EXPECT_EQ(store_->writes(), writes_at_close);
}

}  // namespace
}  // namespace keel::testing
