// Heads are written with a stream's first events, at head checkpoints and on
// Close, not in every commit (rfcs/0003-durable-layout.md, "Head
// checkpoints"); after a crash the heads that lag are caught up from the
// entries, so nothing a reader sees changes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "keel/core/config.h"
#include "keel/core/logger.h"
#include "keel/core/stream_policy.h"
#include "keel/drivers/durable/dedupe_index.h"
#include "keel/drivers/durable/key_layout.h"
#include "keel/statestore/fault_injecting_store.h"
#include "keel/statestore/memory/memory_store.h"
#include "keel/tests/drivers/durable/durable_test_util.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::testing {
namespace {

using ::testing::ElementsAreArray;

class HeadCheckpointTest : public ::testing::Test {
 protected:
  // Without the background sweep, so a stream is verified by what touches it.
  absl::StatusOr<std::unique_ptr<EventBus>> Open(uint64_t checkpoint_bytes = 64 << 20) {
    DriverContext context;
    context.logger = logger_;
    DurableOptions options = Options();
    options.head_checkpoint_bytes = checkpoint_bytes;
    options.verify_in_background = false;
    return OpenDurableBus(store_, options, context);
  }

  // The head as stored, which may lag what the bus reports.
  uint64_t StoredNext(absl::string_view stream) {
    absl::StatusOr<std::string> value = store_->Get(durable::HeadKey(stream));
    if (!value.ok()) return 0;
    absl::StatusOr<durable::Head> head = durable::DecodeHead(*value);
    return head.ok() ? head->next : 0;
  }

  // Power loss with `bus` still open: nothing it does afterwards reaches the
  // store (not even Close()'s checkpoint).
  void Crash(std::unique_ptr<EventBus> bus) {
    ASSERT_OK(store_->SimulateCrash());
    ASSERT_OK(store_->Close());
    bus.reset();
    store_->Reopen();
  }

  static Event Keyed(absl::string_view stream, absl::string_view key, int n) {
    Event event = NewEvent(stream, n);
    event.idempotency_key = std::string(key);
    return event;
  }

  // A crash lost sequences 2 and 3 of "pay" and kept 4, which carried the
  // idempotency key "charge-1".
  void CrashKeepingAKeyedEntryAfterAHole() {
    {
      ASSERT_OK_AND_ASSIGN(auto bus, Open());
      for (int i = 1; i <= 3; ++i) ASSERT_OK(bus->Publish(NewEvent("pay", i)));
      ASSERT_OK(bus->Publish(Keyed("pay", "charge-1", 4)));
      Crash(std::move(bus));
    }
    WriteBatch lost;
    for (uint64_t seq : {2, 3}) lost.Delete(durable::EntryKey("pay", seq));
    ASSERT_OK(store_->Write(lost, WriteOptions{.sync = true}));
  }

  static Event Sized(absl::string_view stream, size_t payload_bytes) {
    Event event = NewEvent(stream, 0);
    event.payload = std::string(payload_bytes, 'x');
    return event;
  }

  std::shared_ptr<FaultInjectingStore> store_ =
      std::make_shared<FaultInjectingStore>(std::make_unique<MemoryStore>());
  std::shared_ptr<CapturingLogger> logger_ = std::make_shared<CapturingLogger>();
};

TEST_F(HeadCheckpointTest, AfterACrashListingAndBoundsReportEveryEvent) {
  std::vector<StreamInfo> before;
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open());
    for (int i = 0; i < 10; ++i) ASSERT_OK(bus->Publish(NewEvent("a", i)));
    std::vector<Event> batch = {NewEvent("b", 0), NewEvent("b", 1), NewEvent("b", 2)};
    ASSERT_OK(bus->PublishBatch("b", batch));
    ASSERT_OK(bus->PublishBatch("b", batch));
    ASSERT_OK_AND_ASSIGN(before, bus->replayer()->ListStreams("", 10));
    EXPECT_EQ(StoredNext("a"), 2u);  // Written with the first event only.
    EXPECT_EQ(StoredNext("b"), 4u);
    Crash(std::move(bus));
  }
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  ASSERT_OK_AND_ASSIGN(std::vector<StreamInfo> after, bus->replayer()->ListStreams("", 10));
  // The open after the crash said so on keel.runtime (rfcs/0003, "Unclean shutdown").
  ASSERT_EQ(after.size(), 3u);
  EXPECT_EQ(after[2].stream, "keel.runtime");
  after.pop_back();
  for (size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].last_sequence, before[i].last_sequence) << after[i].stream;
    EXPECT_EQ(after[i].count, before[i].count) << after[i].stream;
    EXPECT_EQ(after[i].bytes, before[i].bytes) << after[i].stream;
    EXPECT_EQ(after[i].oldest_time, before[i].oldest_time) << after[i].stream;
  }
  EXPECT_TRUE(logger_->Contains(LogLevel::kInfo, "caught up the head of stream 'a'"));
  ASSERT_OK_AND_ASSIGN(Receipt next, bus->Publish(NewEvent("a", 10)));
  EXPECT_EQ(next.sequence, 11u);
  ASSERT_OK_AND_ASSIGN(std::vector<Event> all, ReadAll(*bus, "b"));
  EXPECT_THAT(Sequences(all), ElementsAreArray(Range(1, 6)));
}

TEST_F(HeadCheckpointTest, ACheckpointWritesEveryLaggingHead) {
  ASSERT_OK_AND_ASSIGN(auto bus, Open(/*checkpoint_bytes=*/4096));
  for (int i = 0; i < 3; ++i) {  // Far below 4 KiB in all.
    ASSERT_OK(bus->Publish(NewEvent("a", i)));
    ASSERT_OK(bus->Publish(NewEvent("b", i)));
  }
  EXPECT_EQ(StoredNext("a"), 2u);
  EXPECT_EQ(StoredNext("b"), 2u);
  ASSERT_OK(bus->Publish(Sized("c", 4096)));  // Reaches the checkpoint.
  EXPECT_EQ(StoredNext("a"), 4u);
  EXPECT_EQ(StoredNext("b"), 4u);
  EXPECT_EQ(StoredNext("c"), 2u);
  ASSERT_OK(bus->Publish(NewEvent("a", 3)));  // A new interval begins.
  EXPECT_EQ(StoredNext("a"), 4u);
}

TEST_F(HeadCheckpointTest, CloseWritesEveryHead) {
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open());
    for (int i = 0; i < 3; ++i) ASSERT_OK(bus->Publish(NewEvent("a", i)));
    ASSERT_OK(bus->Close());
  }
  store_->Reopen();
  EXPECT_EQ(StoredNext("a"), 4u);
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  ASSERT_OK_AND_ASSIGN(StreamInfo info, bus->replayer()->Bounds("a"));
  EXPECT_EQ(info.last_sequence, 3u);
  EXPECT_FALSE(logger_->Contains(LogLevel::kInfo, "caught up"));
}

TEST_F(HeadCheckpointTest, ZeroWritesEveryHeadInEveryCommit) {
  Config config;
  config.Set("head_checkpoint_bytes", "0");
  ASSERT_OK_AND_ASSIGN(DurableOptions options, DurableOptionsFromConfig(config));
  ASSERT_OK_AND_ASSIGN(auto bus, Open(options.head_checkpoint_bytes));
  for (int i = 0; i < 3; ++i) ASSERT_OK(bus->Publish(NewEvent("a", i)));
  EXPECT_EQ(StoredNext("a"), 4u);
}

TEST_F(HeadCheckpointTest, ACheckpointWithoutSyncFirstSyncsTheEntriesItAccountsFor) {
  DriverContext context;
  context.logger = logger_;
  DurableOptions options = Options(SyncMode::kNone);
  options.head_checkpoint_bytes = 4096;
  ASSERT_OK_AND_ASSIGN(auto bus, OpenDurableBus(store_, options, context));
  for (int i = 0; i < 3; ++i) ASSERT_OK(bus->Publish(NewEvent("a", i)));
  const uint64_t synced = store_->synced_writes();
  ASSERT_OK(bus->Publish(Sized("c", 4096)));  // A checkpoint: a's head is written.
  EXPECT_EQ(StoredNext("a"), 4u);
  EXPECT_EQ(store_->synced_writes(), synced + 1);
}

// A head that accounts for entries of earlier writes (a trim's, or a
// checkpoint's but a stream's first) is written after those are synced:
// LevelDB may keep a later unsynced write and lose an earlier one, and a head
// over a hole would be read past without a signal.
TEST_F(HeadCheckpointTest, HeadsOverEarlierWritesWaitForASync) {
  DriverContext context;
  context.logger = logger_;
  DurableOptions options = Options(SyncMode::kNone);
  options.head_checkpoint_bytes = 0;  // Every commit writes its heads.
  ASSERT_OK_AND_ASSIGN(auto bus, OpenDurableBus(store_, options, context));
  const uint64_t synced = store_->synced_writes();
  ASSERT_OK(bus->Publish(NewEvent("log", 0)));  // The stream's first head: no barrier.
  EXPECT_EQ(store_->synced_writes(), synced);
  for (int i = 1; i < 5; ++i) ASSERT_OK(bus->Publish(NewEvent("log", i)));
  EXPECT_EQ(StoredNext("log"), 6u);
  EXPECT_EQ(store_->synced_writes(), synced + 4);
  ASSERT_OK(bus->Declare("log", *StreamPolicy::Parse("max_events=3")));
  const uint64_t declared = store_->synced_writes();  // Declarations are synced.
  ASSERT_OK_AND_ASSIGN(TrimReport report, bus->Trim(100));
  EXPECT_EQ(report.events, 2u);
  EXPECT_EQ(store_->synced_writes(), declared + 1);
}

// A trim writes its stream's head with its deletes, checkpoint or not: a
// crash right after it keeps the trimmed bounds.
TEST_F(HeadCheckpointTest, ATrimsHeadIsWrittenWithItsDeletes) {
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open());
    for (int i = 0; i < 5; ++i) ASSERT_OK(bus->Publish(NewEvent("log", i)));
    ASSERT_OK(bus->Declare("log", *StreamPolicy::Parse("max_events=3")));
    ASSERT_OK_AND_ASSIGN(TrimReport report, bus->Trim(100));
    ASSERT_EQ(report.events, 2u);
    Crash(std::move(bus));
  }
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  ASSERT_OK_AND_ASSIGN(StreamInfo info, bus->replayer()->Bounds("log"));
  EXPECT_EQ(info.first_sequence, 3u);
  EXPECT_EQ(info.count, 3u);
}

// A crash that kept a stream's later entries but lost the first write, the
// one with its head (LevelDB may lose an earlier unsynced log block and keep
// a later one): the next publish continues after those entries, up to a
// hole among them; the ones after it are dropped (recovery.h), so that no
// reader skips the lost sequence silently.
TEST_F(HeadCheckpointTest, EntriesWithoutAHeadAreTakenInUpToAHole) {
  ASSERT_OK(WriteEntries(*store_, "fresh", {4, 5, 7, 8}));
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  ASSERT_OK_AND_ASSIGN(Receipt next, bus->Publish(NewEvent("fresh", 600)));
  EXPECT_EQ(next.sequence, 6u);
  EXPECT_TRUE(logger_->Contains(LogLevel::kWarn, "stream 'fresh' had entries but no head"));
  EXPECT_TRUE(logger_->Contains(LogLevel::kWarn, "dropped those 2 entries"));
  ASSERT_OK_AND_ASSIGN(std::vector<Event> all, ReadAll(*bus, "fresh"));
  EXPECT_THAT(Sequences(all), ElementsAreArray(Range(4, 6)));
  EXPECT_EQ(all.back().payload, "600");
  EXPECT_EQ(StoredNext("fresh"), 7u);
  for (uint64_t dropped : {7, 8}) {
    EXPECT_THAT(store_->Get(durable::EntryKey("fresh", dropped)),
                StatusIs(absl::StatusCode::kNotFound));
  }
}

// A crash lost sequences 2 and 3 and kept 4, which carried an idempotency
// key: 4 is dropped, and a retry of its key is a new publish, not a
// duplicate pointing at a sequence another event will take.
TEST_F(HeadCheckpointTest, ADroppedEntrysKeyIsForgotten) {
  CrashKeepingAKeyedEntryAfterAHole();
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  ASSERT_OK_AND_ASSIGN(Receipt receipt, bus->Publish(Keyed("pay", "charge-1", 400)));
  EXPECT_FALSE(receipt.duplicate);
  EXPECT_EQ(receipt.sequence, 2u);
  ASSERT_OK_AND_ASSIGN(std::vector<Event> all, ReadAll(*bus, "pay"));
  EXPECT_THAT(Sequences(all), ElementsAreArray(Range(1, 2)));
  EXPECT_EQ(all.back().payload, "400");
}

// The same with the key's record damaged: the stream stays usable, and a
// lookup of that key reports the damage.
TEST_F(HeadCheckpointTest, ADamagedKeyRecordOfADroppedEntryIsLeftAsItIs) {
  CrashKeepingAKeyedEntryAfterAHole();
  store_->CorruptReadsOf(durable::DedupeKey("pay", "charge-1"));
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  ASSERT_OK_AND_ASSIGN(Receipt receipt, bus->Publish(NewEvent("pay", 400)));
  EXPECT_EQ(receipt.sequence, 2u);
  EXPECT_THAT(bus->Publish(Keyed("pay", "charge-1", 401)), StatusIs(absl::StatusCode::kDataLoss));
}

// The same when the stream has no head: the adoption's repair is written
// before the group's idempotency lookups, so a retry of the dropped entry's
// key in the stream's first publish is not a duplicate.
TEST_F(HeadCheckpointTest, AKeyOfAnEntryDroppedAtAdoptionIsForgotten) {
  ASSERT_OK(WriteEntries(*store_, "pay", {4, 5}));
  Event keyed = Keyed("pay", "charge-1", 7);
  keyed.time = absl::Now();
  WriteBatch orphan;
  orphan.Put(durable::EntryKey("pay", 7), durable::EncodeEntry(keyed));
  durable::StageDedupe(orphan, "pay", "charge-1", DedupeHit{7, keyed.id},
                       absl::Now() + absl::Hours(1));
  ASSERT_OK(store_->Write(orphan, WriteOptions{.sync = true}));
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  ASSERT_OK_AND_ASSIGN(Receipt receipt, bus->Publish(Keyed("pay", "charge-1", 600)));
  EXPECT_FALSE(receipt.duplicate);
  EXPECT_EQ(receipt.sequence, 6u);
}

// With sync=always every write is synced already: no barrier is added.
TEST_F(HeadCheckpointTest, SyncAlwaysAddsNoBarrier) {
  ASSERT_OK_AND_ASSIGN(auto bus, Open(/*checkpoint_bytes=*/0));
  const uint64_t synced = store_->synced_writes();
  for (int i = 0; i < 5; ++i) ASSERT_OK(bus->Publish(NewEvent("log", i)));
  EXPECT_EQ(store_->synced_writes(), synced + 5);
}

TEST_F(HeadCheckpointTest, ARefusedFirstPublishLeavesNoStream) {
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open());
    PublishOptions options;
    options.expected_last_sequence = 5;
    EXPECT_FALSE(bus->PublishBatch("ghost", {NewEvent("ghost", 0)}, options).ok());
    ASSERT_OK_AND_ASSIGN(std::vector<StreamInfo> listed, bus->replayer()->ListStreams("", 10));
    EXPECT_TRUE(listed.empty());
    ASSERT_OK(bus->Close());
  }
  store_->Reopen();
  EXPECT_EQ(StoredNext("ghost"), 0u);  // No head record.
}

}  // namespace
}  // namespace keel::testing
