// Epochs (rfcs/0003-durable-layout.md, "Epochs"): after a crash that may
// have lost acknowledged events, their sequences are given again; a cursor
// of a lost event must then be refused, never resolved to a new event with
// its sequence, and every other cursor must keep working.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "keel/core/errors.h"
#include "keel/core/group_record.h"
#include "keel/drivers/durable/epoch_history.h"
#include "keel/drivers/durable/key_layout.h"
#include "keel/drivers/durable/recovery.h"
#include "keel/statestore/fault_injecting_store.h"
#include "keel/statestore/memory/memory_store.h"
#include "keel/tests/drivers/durable/durable_test_util.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class EpochTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kEventsEpoch = 1;  // See ExpectAGroupReads...

  absl::StatusOr<std::unique_ptr<EventBus>> Open(SyncMode sync) {
    DriverContext context;
    context.logger = std::make_shared<CapturingLogger>();
    return OpenDurableBus(store_, Options(sync), context);
  }

  // The machine stops: unsynced writes are lost and the bus writes nothing more.
  void Crash(std::unique_ptr<EventBus> bus) {
    ASSERT_OK(store_->SimulateCrash());
    ASSERT_OK(store_->Close());
    bus.reset();
    store_->Reopen();
  }

  // The process is killed: nothing written is lost, but it does not close.
  // The store's lifetime (StateStore::UnsyncedWritesLifetime) goes on.
  void Kill(std::unique_ptr<EventBus> bus) {
    ASSERT_OK(store_->Close());
    bus.reset();
    store_->Reopen();
  }

  void CloseCleanly(std::unique_ptr<EventBus> bus) {
    ASSERT_OK(bus->Close());
    bus.reset();
    store_->Reopen();
  }

  // Publishes events 1..3 to `stream` under sync=none, then the machine
  // stops: `lost` is the cursor of event 2, which the crash took.
  void PublishAndLose(absl::string_view stream, Cursor* lost) {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
    *lost = Publish(*bus, stream, 1, 3)[1].cursor;
    Crash(std::move(bus));
  }

  // Receipts of events with payloads `from`..`to` published to `stream`.
  static std::vector<Receipt> Publish(EventBus& bus, absl::string_view stream, int from, int to) {
    std::vector<Receipt> receipts;
    for (int n = from; n <= to; ++n) receipts.push_back(bus.Publish(NewEvent(stream, n)).value());
    return receipts;
  }

  // Payloads of every event of `stream` after `after`, or the error.
  static absl::StatusOr<std::vector<std::string>> PayloadsAfter(EventBus& bus, const Cursor& after,
                                                                absl::string_view stream = "s") {
    ReplayRequest request;
    request.stream = std::string(stream);
    request.after = Position::After(after);
    absl::StatusOr<ReplayPage> page = bus.replayer()->Replay(request);
    if (!page.ok()) return page.status();
    std::vector<std::string> payloads;
    for (const Event& event : page->events) payloads.push_back(event.payload);
    return payloads;
  }

  void ExpectAGroupReadsTheEventsThatTookLostSequences(GroupRecord survived);

  std::shared_ptr<FaultInjectingStore> store_ =
      std::make_shared<FaultInjectingStore>(std::make_unique<MemoryStore>());
};

TEST_F(EpochTest, ACursorOfALostEventIsRefusedOnceItsSequenceIsGivenAgain) {
  Cursor kept, lost, lost_new_stream;
  uint64_t crashed_epoch = 0;
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kAlways));
    kept = Publish(*bus, "s", 1, 5)[3].cursor;  // Sequence 4.
    CloseCleanly(std::move(bus));
  }
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
    lost = Publish(*bus, "s", 6, 8)[1].cursor;  // Sequence 7, never synced.
    lost_new_stream = Publish(*bus, "t", 1, 3)[1].cursor;
    crashed_epoch = bus->replayer()->epoch();
    Crash(std::move(bus));
  }
  ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
  EXPECT_NE(bus->replayer()->epoch(), crashed_epoch);
  ASSERT_OK_AND_ASSIGN(StreamInfo info, bus->replayer()->Bounds("s"));
  ASSERT_EQ(info.last_sequence, 5u) << "the crash should have lost 6..8";

  // Sequences 6..8 and t's 1..3 go to new events.
  Publish(*bus, "s", 106, 108);
  Publish(*bus, "t", 101, 103);
  for (const auto& [cursor, stream] : {std::pair{lost, "s"}, std::pair{lost_new_stream, "t"}}) {
    absl::StatusOr<std::vector<std::string>> after_lost = PayloadsAfter(*bus, cursor, stream);
    EXPECT_THAT(after_lost, HasErrorKind(ErrorKind::kCursorMismatch)) << stream;
    EXPECT_THAT(after_lost.status().message(), HasSubstr("lost")) << stream;
  }
  EXPECT_THAT(PayloadsAfter(*bus, kept).value_or(std::vector<std::string>{"(error)"}),
              ElementsAre("5", "106", "107", "108"));
  // Following, as a reconnecting SSE reader does, checks the same way.
  EXPECT_THAT(bus->Follow("s", Position::After(lost)), HasErrorKind(ErrorKind::kCursorMismatch));
  ASSERT_OK_AND_ASSIGN(auto follower, bus->Follow("s", Position::After(kept)));
  ASSERT_OK_AND_ASSIGN(auto events, follower->Next(4, absl::Seconds(10)));
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0]->payload, "5");
  EXPECT_EQ(events[3]->payload, "108");
}

// A killed process lost nothing when its unsynced writes outlive it (the
// page cache does, until the machine stops): the store keeps its epoch,
// and says so.
TEST_F(EpochTest, AKilledProcessKeepsTheEpochWhenItsWritesOutliveIt) {
  std::vector<Receipt> before;
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
    before = Publish(*bus, "s", 1, 3);
    Kill(std::move(bus));
  }
  DriverContext context;
  auto logger = std::make_shared<CapturingLogger>();
  context.logger = logger;
  ASSERT_OK_AND_ASSIGN(auto bus, OpenDurableBus(store_, Options(SyncMode::kNone), context));
  EXPECT_EQ(bus->replayer()->epoch(), before[0].cursor.epoch);
  ASSERT_OK_AND_ASSIGN(StreamInfo info, bus->replayer()->Bounds("s"));
  EXPECT_THAT(info.earlier_epochs, ::testing::IsEmpty());
  std::vector<std::string> warnings;
  for (const CapturingLogger::Line& line : logger->lines()) warnings.push_back(line.message);
  EXPECT_THAT(warnings, ::testing::Contains(HasSubstr(
                            "the machine has not stopped since (the store's unsynced writes "
                            "outlive a process), so every acknowledged event is kept")));
  Publish(*bus, "s", 4, 4);
  EXPECT_THAT(PayloadsAfter(*bus, before[1].cursor).value_or(std::vector<std::string>{"(error)"}),
              ElementsAre("3", "4"));
}

// A marker that does not decode could be of any process: the open assumes
// the worst, even after a mere kill.
TEST_F(EpochTest, ADamagedMarkerAfterAKillStartsANewEpoch) {
  uint64_t epoch = 0;
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
    epoch = Publish(*bus, "s", 1, 1).back().cursor.epoch;
    Kill(std::move(bus));
  }
  store_->CorruptReadsOf(durable::OpenMarkerKey());
  ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
  EXPECT_NE(bus->replayer()->epoch(), epoch);
}

// A store that cannot tell how long its unsynced writes last cannot tell a
// killed process from a stopped machine either: it starts a new epoch, and
// every cursor of what the process wrote stays good.
TEST_F(EpochTest, CursorsOfAKilledProcessStayGoodInANewEpoch) {
  store_->SetLifetimeUnknown();
  std::vector<Receipt> before;
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
    before = Publish(*bus, "s", 1, 5);
    Kill(std::move(bus));
  }
  ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
  EXPECT_NE(bus->replayer()->epoch(), before[0].cursor.epoch)
      << "an unsynced process's crash starts a new epoch, lost events or not";
  Publish(*bus, "s", 6, 6);
  EXPECT_THAT(PayloadsAfter(*bus, before[2].cursor).value_or(std::vector<std::string>{"(error)"}),
              ElementsAre("4", "5", "6"));
  EXPECT_THAT(PayloadsAfter(*bus, before[4].cursor).value_or(std::vector<std::string>{"(error)"}),
              ElementsAre("6"));
  ReplayRequest until;
  until.stream = "s";
  until.until = before[3].cursor;
  ASSERT_OK_AND_ASSIGN(ReplayPage page, bus->replayer()->Replay(until));
  EXPECT_EQ(page.events.size(), 4u);
}

// The open marker and the new epoch reach the disk in one synced write;
// the second is the unclean-shutdown warning's publish, the first of
// keel.runtime in the new epoch.
TEST_F(EpochTest, AnOpenAfterAnUnsyncedCrashSyncsTheNewEpochWithItsMarker) {
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
    Crash(std::move(bus));
  }
  const uint64_t before = store_->synced_writes();
  ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
  EXPECT_EQ(store_->synced_writes() - before, 2u);
}

TEST_F(EpochTest, BoundsOutliveCleanRestartsAndFurtherCrashes) {
  Cursor first_kept, first_lost;
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kAlways));
    first_kept = Publish(*bus, "s", 1, 3).back().cursor;  // 3
    CloseCleanly(std::move(bus));
  }
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
    first_lost = Publish(*bus, "s", 4, 5).back().cursor;  // 5, lost
    Crash(std::move(bus));
  }
  Cursor second_kept, second_lost;
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
    second_kept = Publish(*bus, "s", 104, 105).back().cursor;  // 5 again
    CloseCleanly(std::move(bus));
  }
  {
    // The same epoch after a clean close: the start written above still counts.
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
    EXPECT_EQ(bus->replayer()->epoch(), second_kept.epoch);
    EXPECT_THAT(PayloadsAfter(*bus, first_lost), HasErrorKind(ErrorKind::kCursorMismatch));
    second_lost = Publish(*bus, "s", 106, 107).back().cursor;  // 7, lost
    Crash(std::move(bus));
  }
  ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
  Publish(*bus, "s", 206, 208);
  EXPECT_THAT(PayloadsAfter(*bus, first_kept).value_or(std::vector<std::string>{"(error)"}),
              ElementsAre("104", "105", "206", "207", "208"));
  EXPECT_THAT(PayloadsAfter(*bus, second_kept).value_or(std::vector<std::string>{"(error)"}),
              ElementsAre("206", "207", "208"));
  EXPECT_THAT(PayloadsAfter(*bus, first_lost), HasErrorKind(ErrorKind::kCursorMismatch));
  EXPECT_THAT(PayloadsAfter(*bus, second_lost), HasErrorKind(ErrorKind::kCursorMismatch));
}

// A stream's first write in a later epoch holds its epoch start and is
// synced under any mode: were it lost and a later write kept, a stream
// with no head would take the later entries in and start its epoch after
// them, and a cursor of a lost event below that would resolve again.
TEST_F(EpochTest, TheWriteThatStartsAStreamsEpochSurvivesACrash) {
  Cursor lost;
  ASSERT_NO_FATAL_FAILURE(PublishAndLose("t", &lost));
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
    Publish(*bus, "t", 101, 101);  // The stream's start in this epoch: synced.
    Publish(*bus, "t", 102, 103);  // Not synced.
    Crash(std::move(bus));
  }
  ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
  ASSERT_OK_AND_ASSIGN(std::vector<Event> kept, ReadAll(*bus, "t"));
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].payload, "101");
  Publish(*bus, "t", 202, 203);
  EXPECT_THAT(PayloadsAfter(*bus, lost, "t"), HasErrorKind(ErrorKind::kCursorMismatch));
}

// A write that fails records no start: the next publish stages it again.
TEST_F(EpochTest, AFailedWriteLeavesTheStartToTheNextPublish) {
  Cursor lost;
  ASSERT_NO_FATAL_FAILURE(PublishAndLose("s", &lost));
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
    store_->FailNthWrite(1, absl::UnavailableError("disk full"));
    EXPECT_THAT(bus->Publish(NewEvent("s", 100)), StatusIs(absl::StatusCode::kUnavailable));
    Publish(*bus, "s", 101, 103);
    CloseCleanly(std::move(bus));
  }
  ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
  EXPECT_THAT(PayloadsAfter(*bus, lost), HasErrorKind(ErrorKind::kCursorMismatch));
}

// A group whose record survived a crash that lost events it had read (its
// record is synced; the events were in an older LevelDB log the crash lost)
// goes back to the last event kept, and reads the events that took the lost
// sequences instead of skipping them. `survived` is the record; epoch
// kEventsEpoch in it stands for the epoch of events 1..10, synced; 11..15
// are lost.
void EpochTest::ExpectAGroupReadsTheEventsThatTookLostSequences(GroupRecord survived) {
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kAlways));
    const uint64_t epoch = Publish(*bus, "s", 1, 10).back().cursor.epoch;
    if (survived.epoch == kEventsEpoch) survived.epoch = epoch;
    CloseCleanly(std::move(bus));
  }
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
    Publish(*bus, "s", 11, 15);
    Crash(std::move(bus));
  }
  WriteBatch batch;
  batch.Put(absl::StrCat("X", GroupKey("s", "g")), survived.Encode());
  ASSERT_OK(store_->Write(batch, WriteOptions{.sync = true}));
  ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
  const ConsumeRequest request{"s", "g", 10, absl::Seconds(30), ConsumeRequest::Start::kEarliest};
  // Before new events: nothing to read (not an error, not a wait).
  if (survived.HasLease()) {
    // Its holder cannot commit the lost events it was given: the lease ended.
    EXPECT_THAT(bus->groups()->Commit("s", "g", Cursor::For("s", survived.epoch, survived.lease_to),
                                      survived.lease_token),
                HasErrorKind(ErrorKind::kConflict));
  }
  ASSERT_OK_AND_ASSIGN(ConsumePage before, bus->groups()->Consume(request));
  EXPECT_FALSE(before.busy_until.has_value()) << "a lease over lost events ended";
  EXPECT_TRUE(before.events.empty());
  // Once new events pass the lost ones, the group reads all of them.
  Publish(*bus, "s", 111, 116);
  ASSERT_OK_AND_ASSIGN(ConsumePage after, bus->groups()->Consume(request));
  EXPECT_THAT(Sequences(after.events), ElementsAre(11, 12, 13, 14, 15, 16));
}

TEST_F(EpochTest, AGroupThatCommittedLostEventsReadsTheEventsThatTookTheirSequences) {
  GroupRecord survived;
  survived.epoch = kEventsEpoch;
  survived.committed = 15;
  survived.last_token = 3;
  ExpectAGroupReadsTheEventsThatTookLostSequences(survived);
}

// The same for a record written before epochs existed (version g1).
TEST_F(EpochTest, AGroupRecordWrittenBeforeEpochsIsOfTheFirstEpoch) {
  GroupRecord survived;
  survived.committed = 15;
  survived.last_token = 3;
  ExpectAGroupReadsTheEventsThatTookLostSequences(survived);
}

// A record of an epoch the store forgot (kMaxEarlierEpochs) is older than
// every epoch kept.
TEST_F(EpochTest, AGroupRecordOfAForgottenEpochIsOlderThanEveryKeptOne) {
  GroupRecord survived;
  survived.epoch = 42;
  survived.committed = 15;
  survived.last_token = 3;
  ExpectAGroupReadsTheEventsThatTookLostSequences(survived);
}

TEST_F(EpochTest, ALeaseOverLostEventsEnds) {
  GroupRecord survived;
  survived.epoch = kEventsEpoch;
  survived.committed = 10;
  survived.last_token = survived.lease_token = 3;
  survived.lease_expires = absl::Now() + absl::Hours(1);
  survived.lease_from = 10;
  survived.lease_to = 15;
  ExpectAGroupReadsTheEventsThatTookLostSequences(survived);
}

// A lease granted before a restart that started a new epoch is committed
// with the cursors it was granted with.
TEST_F(EpochTest, AGroupCommitTakesACursorOfAnEarlierEpoch) {
  store_->SetLifetimeUnknown();  // Each kill starts an epoch.
  ConsumePage page;
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
    Publish(*bus, "s", 1, 4);
    ConsumeRequest request{"s", "g", 10, absl::Hours(1), ConsumeRequest::Start::kEarliest};
    ASSERT_OK_AND_ASSIGN(page, bus->groups()->Consume(request));
    Kill(std::move(bus));
  }
  ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
  ASSERT_NE(bus->replayer()->epoch(), page.lease.to.epoch);
  ASSERT_OK(bus->groups()->Commit("s", "g", page.lease.to, page.lease.token));
  ASSERT_OK_AND_ASSIGN(GroupInfo info, bus->groups()->Describe("s", "g"));
  EXPECT_EQ(info.cursor.sequence, 4u);
  EXPECT_EQ(info.cursor.epoch, bus->replayer()->epoch());
}

// A crash loop must not grow the store without bound: past
// kMaxEarlierEpochs the oldest epoch is forgotten with its starts, and its
// cursors read as of another store.
TEST_F(EpochTest, OnlyTheLastEpochsAreKept) {
  store_->SetLifetimeUnknown();  // Each kill starts an epoch.
  std::vector<Cursor> cursors;  // One per epoch, oldest first.
  for (size_t i = 0; i < durable::kMaxEarlierEpochs + 2; ++i) {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
    cursors.push_back(Publish(*bus, "s", static_cast<int>(i), static_cast<int>(i)).back().cursor);
    Kill(std::move(bus));
  }
  ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
  ASSERT_OK_AND_ASSIGN(std::string meta, store_->Get(durable::MetaKey()));
  ASSERT_OK_AND_ASSIGN(durable::StoreMeta decoded, durable::DecodeMeta(meta));
  EXPECT_EQ(decoded.earlier_epochs.size(), durable::kMaxEarlierEpochs);
  EXPECT_EQ(decoded.earlier_epochs.front(), cursors[2].epoch);
  // The second epoch, forgotten, had a start; the first had none to delete.
  EXPECT_THAT(store_->Get(durable::EpochStartKey("s", cursors[1].epoch)),
              StatusIs(absl::StatusCode::kNotFound));
  for (size_t i : {0, 1}) {
    absl::StatusOr<std::vector<std::string>> forgotten = PayloadsAfter(*bus, cursors[i]);
    EXPECT_THAT(forgotten, HasErrorKind(ErrorKind::kCursorMismatch)) << i;
    EXPECT_THAT(forgotten.status().message(), HasSubstr("another store epoch")) << i;
  }
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> kept, PayloadsAfter(*bus, cursors[2]));
  EXPECT_EQ(kept.size(), durable::kMaxEarlierEpochs - 1);
}

// A group idle through so many crashes that its epoch and the next were
// forgotten still reads every event that took a sequence it had read: the
// forgotten epochs' starts live on in the stream's floor.
TEST_F(EpochTest, AGroupIdleThroughForgottenEpochsSkipsNothing) {
  store_->SetLifetimeUnknown();  // Each kill starts an epoch.
  GroupRecord survived;
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kAlways));
    survived.epoch = Publish(*bus, "s", 1, 10).back().cursor.epoch;
    CloseCleanly(std::move(bus));
  }
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
    Publish(*bus, "s", 11, 15);
    Crash(std::move(bus));
  }
  survived.committed = 15;  // Read through 15 before the crash took 11..15.
  WriteBatch batch;
  batch.Put(absl::StrCat("X", GroupKey("s", "g")), survived.Encode());
  ASSERT_OK(store_->Write(batch, WriteOptions{.sync = true}));
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
    ASSERT_OK(bus->PublishBatch("s", std::vector<Event>(30, NewEvent("s", 1))).status());  // 11..40
    Kill(std::move(bus));
  }
  for (size_t i = 0; i <= durable::kMaxEarlierEpochs; ++i) {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
    Publish(*bus, "s", 1, 1);
    Kill(std::move(bus));
  }
  ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
  const ConsumeRequest request{"s", "g", 5, absl::Seconds(30), ConsumeRequest::Start::kEarliest};
  ASSERT_OK_AND_ASSIGN(ConsumePage page, bus->groups()->Consume(request));
  EXPECT_THAT(Sequences(page.events), ElementsAre(11, 12, 13, 14, 15));
}

TEST(EpochHistoryTest, EachEarlierEpochIsBoundedByTheFirstStartAfterIt) {
  // Epochs A, B, C before the current D; stream "s" started at 20 in B, 30
  // in C and 40 in D, and the epochs forgotten before A at 5.
  constexpr uint64_t kA = 1, kB = 2, kC = 3, kD = 4;
  durable::EpochStarts starts;
  starts["s"] = {{kD, 40}, {kB, 20}, {durable::kForgottenEpochs, 5}, {kC, 30}};
  const durable::EpochHistory history(kD, {kA, kB, kC}, starts);
  EXPECT_THAT(history.CursorBounds("s"), ElementsAre(EarlierEpoch{kA, 20}, EarlierEpoch{kB, 30},
                                                     EarlierEpoch{kC, 40}, EarlierEpoch{0, 5}));
  EXPECT_THAT(history.CursorBounds("t"),
              ElementsAre(EarlierEpoch{kA}, EarlierEpoch{kB}, EarlierEpoch{kC}, EarlierEpoch{0}));
  EXPECT_FALSE(history.NeedsStart("s"));
  EXPECT_TRUE(history.NeedsStart("t"));
  EXPECT_THAT(durable::EpochHistory(kD, {}, {}).CursorBounds("s"), ::testing::IsEmpty());
}

TEST_F(EpochTest, ACrashUnderSyncAlwaysKeepsTheEpoch) {
  uint64_t epoch = 0;
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kAlways));
    epoch = Publish(*bus, "s", 1, 2).back().cursor.epoch;
    Crash(std::move(bus));
  }
  ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
  EXPECT_EQ(bus->replayer()->epoch(), epoch);
}

TEST_F(EpochTest, ADamagedEpochStartFailsTheOpenNamingTheKey) {
  uint64_t epoch = 0;
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
    Crash(std::move(bus));
  }
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kAlways));
    epoch = Publish(*bus, "s", 1, 1).back().cursor.epoch;
    CloseCleanly(std::move(bus));
  }
  store_->CorruptReadsOf(durable::EpochStartKey("s", epoch));
  absl::StatusOr<std::unique_ptr<EventBus>> damaged = Open(SyncMode::kAlways);
  EXPECT_THAT(damaged, StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(damaged.status().message(),
              HasSubstr(durable::PrintableKey(durable::EpochStartKey("s", epoch))));
  store_->ClearCorruptReads();
  store_->Reopen();
  // A start of an epoch the store never had is damage too.
  WriteBatch stray;
  stray.Put(durable::EpochStartKey("s", epoch + 1), durable::EncodeEpochStart(3));
  ASSERT_OK(store_->Write(stray, WriteOptions{.sync = true}));
  EXPECT_THAT(Open(SyncMode::kAlways), StatusIs(absl::StatusCode::kDataLoss));
}

}  // namespace
}  // namespace keel::testing
