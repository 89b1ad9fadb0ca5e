// The durable driver under injected faults: failed writes, crashes that lose
// unsynced writes and corrupt records (tails checked after open:
// tail_verification_test.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

#include "absl/strings/match.h"
#include "keel/core/logger.h"
#include "keel/core/mutex.h"
#include "keel/core/redactor.h"
#include "keel/core/stream_policy.h"
#include "keel/drivers/durable/key_layout.h"
#include "keel/drivers/durable/runtime_warning.h"
#include "keel/statestore/fault_injecting_store.h"
#include "keel/statestore/memory/memory_store.h"
#include "keel/tests/drivers/durable/durable_test_util.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::testing {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

class DurableFaultTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::unique_ptr<EventBus>> Open(SyncMode sync = SyncMode::kAlways) {
    DriverContext context;
    context.logger = logger_;
    return OpenDurableBus(store_, Options(sync), context);
  }

  std::shared_ptr<FaultInjectingStore> store_ =
      std::make_shared<FaultInjectingStore>(std::make_unique<MemoryStore>());
  std::shared_ptr<CapturingLogger> logger_ = std::make_shared<CapturingLogger>();
};

TEST_F(DurableFaultTest, FailedWriteConsumesNoSequenceAndLeavesNoGap) {
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  for (int i = 0; i < 3; ++i) ASSERT_OK(bus->Publish(NewEvent("s", i)));
  store_->FailNthWrite(1, absl::UnavailableError("disk full"));
  EXPECT_THAT(bus->Publish(NewEvent("s", 3)), StatusIs(absl::StatusCode::kUnavailable));
  std::vector<Event> batch = {NewEvent("s", 4), NewEvent("s", 5)};
  ASSERT_OK_AND_ASSIGN(std::vector<Receipt> receipts, bus->PublishBatch("s", batch));
  EXPECT_EQ(receipts[0].sequence, 4u);
  EXPECT_EQ(receipts[1].sequence, 5u);
  ASSERT_OK_AND_ASSIGN(std::vector<Event> all, ReadAll(*bus, "s"));
  EXPECT_THAT(Sequences(all), ElementsAreArray(Range(1, 5)));
  EXPECT_EQ(all[3].payload, "4");  // The failed event "3" never landed.
}

TEST_F(DurableFaultTest, FailedWriteIsNotDeliveredToSubscribers) {
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  ASSERT_OK_AND_ASSIGN(auto follower, bus->Follow("s", Position::Latest()));
  store_->FailNthWrite(1, absl::UnavailableError("disk full"));
  EXPECT_FALSE(bus->Publish(NewEvent("s", 0)).ok());
  ASSERT_OK(bus->Publish(NewEvent("s", 1)));
  ASSERT_OK_AND_ASSIGN(auto events, follower->Next(10, absl::Seconds(10)));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]->sequence, 1u);
  EXPECT_EQ(events[0]->payload, "1");
}

TEST_F(DurableFaultTest, CrashLosesNoAcknowledgedEventWithSyncAlways) {
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kAlways));
    for (int i = 0; i < 20; ++i) ASSERT_OK(bus->Publish(NewEvent("s", i)));
    ASSERT_OK(store_->SimulateCrash());  // Power loss while the bus still runs.
  }
  store_->Reopen();  // The old bus's Close() closed the wrapper again.
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  ASSERT_OK_AND_ASSIGN(std::vector<Event> all, ReadAll(*bus, "s"));
  EXPECT_THAT(Sequences(all), ElementsAreArray(Range(1, 20)));
  ASSERT_OK_AND_ASSIGN(Receipt next, bus->Publish(NewEvent("s", 20)));
  EXPECT_EQ(next.sequence, 21u);
}

TEST_F(DurableFaultTest, CrashWithSyncNoneRecoversConsistentPrefix) {
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
    for (int i = 0; i < 20; ++i) ASSERT_OK(bus->Publish(NewEvent("s", i)));
    ASSERT_OK(store_->SimulateCrash());
    // The process dies with the machine: its bus writes nothing after the
    // crash (its Close() would write heads for events the crash took).
    ASSERT_OK(store_->Close());
  }
  store_->Reopen();
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  ASSERT_OK_AND_ASSIGN(std::vector<Event> all, ReadAll(*bus, "s"));
  ASSERT_OK_AND_ASSIGN(StreamInfo info, bus->replayer()->Bounds("s"));
  // Unsynced events may be gone, but what remains is gap-free and the
  // counter continues right after it.
  EXPECT_THAT(Sequences(all), ElementsAreArray(Range(1, info.last_sequence)));
  ASSERT_OK_AND_ASSIGN(Receipt next, bus->Publish(NewEvent("s", 99)));
  EXPECT_EQ(next.sequence, info.last_sequence + 1);
}

TEST_F(DurableFaultTest, CorruptHeadFailsOpenNamingTheKey) {
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open());
    ASSERT_OK(bus->Publish(NewEvent("orders", 0)));
  }
  store_->Reopen();
  store_->CorruptReadsOf(durable::HeadKey("orders"));
  absl::StatusOr<std::unique_ptr<EventBus>> bus = Open();
  EXPECT_THAT(bus, StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(std::string(bus.status().message()), HasSubstr("Horders"));
}

TEST_F(DurableFaultTest, CorruptEntryFailsReplayNamingTheKey) {
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  for (int i = 0; i < 3; ++i) ASSERT_OK(bus->Publish(NewEvent("orders", i)));
  store_->CorruptReadsOf(durable::EntryKey("orders", 2));
  absl::StatusOr<std::vector<Event>> all = ReadAll(*bus, "orders");
  EXPECT_THAT(all, StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(std::string(all.status().message()), HasSubstr("Eorders/2"));
}

class ThrowingRedactor : public Redactor {
 public:
  void Redact(Event&) const override { throw std::runtime_error("the redactor gave up"); }
};

// A publish is counted in flight until answered, so that Close() waits for
// it; one that throws before the bus took it must not stay counted.
// A MemoryStore whose writes, once Hold() is called, wait until Release().
class HeldWritesStore final : public StateStore {
 public:
  void Hold() { held_.store(true); }
  bool AwaitHeldWrite() { return entered_.WaitForNotificationWithTimeout(absl::Seconds(10)); }
  void Release() { release_.Notify(); }

  absl::StatusOr<std::string> Get(absl::string_view key) override { return base_.Get(key); }
  absl::Status Write(const WriteBatch& batch, const WriteOptions& options) override {
    if (held_.load()) {
      entered_.Notify();
      release_.WaitForNotification();
    }
    return base_.Write(batch, options);
  }
  std::unique_ptr<StoreIterator> NewIterator(const KeyRange& range) override {
    return base_.NewIterator(range);
  }
  absl::StatusOr<uint64_t> ApproximateSize(const KeyRange& range) override {
    return base_.ApproximateSize(range);
  }
  absl::Status Close() override { return base_.Close(); }

 private:
  MemoryStore base_;
  std::atomic<bool> held_{false};
  Notification entered_;
  Notification release_;
};

TEST(DurableAsyncFaultTest, AnAsyncPublishReturnsBeforeItsWriteAndIsAnsweredAfter) {
  auto store = std::make_shared<HeldWritesStore>();
  ASSERT_OK_AND_ASSIGN(auto bus, OpenDurableBus(store, Options(), DriverContext()));
  ASSERT_TRUE(bus->PublishesAsync());
  store->Hold();
  Notification returned, answered;
  absl::StatusOr<std::vector<Receipt>> answer;
  std::thread publisher([&] {
    bus->PublishBatchAsync("s", {NewEvent("s", 1)}, {},
                           [&](absl::StatusOr<std::vector<Receipt>> receipts) {
                             answer = std::move(receipts);
                             answered.Notify();
                           });
    returned.Notify();
  });
  ASSERT_TRUE(store->AwaitHeldWrite());
  // The call came back while the write it caused is still held.
  EXPECT_TRUE(returned.WaitForNotificationWithTimeout(absl::Seconds(10)))
      << "PublishBatchAsync waited for the store";
  EXPECT_FALSE(answered.HasBeenNotified());
  store->Release();
  publisher.join();
  ASSERT_TRUE(answered.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_OK(answer.status());
  ASSERT_EQ(answer->size(), 1u);
  EXPECT_EQ((*answer)[0].sequence, 1u);
  EXPECT_OK(bus->Close(absl::Seconds(10)));
}

TEST(DurableAsyncFaultTest, AnAsyncPublishThatThrowsLeavesNothingInFlight) {
  DriverContext context;
  context.redactor = std::make_shared<ThrowingRedactor>();
  ASSERT_OK_AND_ASSIGN(auto bus,
                       OpenDurableBus(std::make_shared<MemoryStore>(), Options(), context));
  EXPECT_THROW(bus->PublishBatchAsync("s", {NewEvent("s", 1)}, {},
                                      [](absl::StatusOr<std::vector<Receipt>>) {}),
               std::runtime_error);
  EXPECT_OK(bus->Close(absl::Milliseconds(500)));
}

// Warnings of an unclean shutdown in the log so far.
int UncleanWarnings(const CapturingLogger& logger, absl::string_view fragment) {
  int found = 0;
  for (const CapturingLogger::Line& line : logger.lines()) {
    found += line.level == LogLevel::kWarn &&
             absl::StrContains(line.message, "the store was not closed cleanly") &&
             absl::StrContains(line.message, fragment);
  }
  return found;
}

TEST_F(DurableFaultTest, ACleanCloseOpensWithoutAWarning) {
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
    ASSERT_OK(bus->Publish(NewEvent("s", 0)));
    ASSERT_OK(bus->Close());
  }
  store_->Reopen();
  ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
  EXPECT_EQ(UncleanWarnings(*logger_, ""), 0);
  ASSERT_OK_AND_ASSIGN(StreamInfo info, bus->replayer()->Bounds("s"));
  EXPECT_EQ(info.last_sequence, 1u);
}

// An open after a crash says so once, and what the last process's sync
// mode may have cost; a clean close afterwards clears it.
TEST_F(DurableFaultTest, AnOpenAfterACrashWarnsWhatTheSyncModeMayHaveLost) {
  for (SyncMode sync : {SyncMode::kNone, SyncMode::kAlways}) {
    {
      ASSERT_OK_AND_ASSIGN(auto bus, Open(sync));
      ASSERT_OK(bus->Publish(NewEvent("s", 0)));
      ASSERT_OK(store_->SimulateCrash());
      ASSERT_OK(store_->Close());  // The process died with the machine: no Close() of its own.
    }
    store_->Reopen();
    {
      ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kAlways));
      ASSERT_OK(bus->Close());
    }
    store_->Reopen();
  }
  EXPECT_EQ(UncleanWarnings(*logger_, ""), 2);
  EXPECT_EQ(UncleanWarnings(*logger_, "sync=interval or none"), 1);
  EXPECT_EQ(UncleanWarnings(*logger_, "handed out again"), 1);
  EXPECT_EQ(UncleanWarnings(*logger_, "sync=always, so every acknowledged event is kept"), 1);
  // Each is also an event on keel.runtime, for whoever follows the bus.
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  ASSERT_OK_AND_ASSIGN(std::vector<Event> warnings, ReadAll(*bus, "keel.runtime"));
  ASSERT_EQ(warnings.size(), 2u);
  for (const Event& warning : warnings) {
    EXPECT_EQ(warning.type, "runtime.warning");
    EXPECT_THAT(warning.payload, HasSubstr("\"message\":\"the store was not closed cleanly"));
  }
  EXPECT_THAT(warnings[0].payload, HasSubstr("handed out again"));
}

// A marker that does not decode still says the store was not closed; what
// the process acknowledged is unknown, so the warning assumes the worst.
TEST_F(DurableFaultTest, ADamagedOpenMarkerReadsAsAnUnsyncedCrash) {
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open());
    ASSERT_OK(store_->SimulateCrash());
    ASSERT_OK(store_->Close());
  }
  store_->Reopen();
  store_->CorruptReadsOf(durable::OpenMarkerKey());
  ASSERT_OK(Open().status());
  EXPECT_EQ(UncleanWarnings(*logger_, "sync=interval or none"), 1);
}

// Until a clean close the marker keeps the worst since the last one: an
// open that failed, or a sync=always process killed or crashed in turn,
// does not make the next open say less than the first crash cost.
TEST_F(DurableFaultTest, TheWarningLastsUntilACleanClose) {
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
    ASSERT_OK(bus->Declare("s", StreamPolicy::Parse("max_events=10").value()));
    ASSERT_OK(bus->Publish(NewEvent("s", 0)));
    ASSERT_OK(store_->SimulateCrash());
    ASSERT_OK(store_->Close());
  }
  store_->Reopen();
  store_->CorruptReadsOf("Xpolicy/s");
  EXPECT_FALSE(Open(SyncMode::kAlways).ok()) << "a damaged declaration should fail the open";
  store_->ClearCorruptReads();
  store_->Reopen();  // The failed open closed the wrapper.
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kAlways));
    ASSERT_OK(store_->Close());  // Killed: the machine runs on.
  }
  store_->Reopen();
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kAlways));
    ASSERT_OK(store_->SimulateCrash());
    ASSERT_OK(store_->Close());
  }
  store_->Reopen();
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kAlways));
    ASSERT_OK(bus->Close());
  }
  store_->Reopen();
  ASSERT_OK(Open(SyncMode::kAlways).status());
  // Every open up to the clean close warned that events may be lost,
  // though the machine stopped only twice; the open after it did not warn.
  EXPECT_EQ(UncleanWarnings(*logger_, "may be lost"), 4);
  EXPECT_EQ(UncleanWarnings(*logger_, ""), 4);
}

// A close whose checkpoint failed is not a clean close: the next open still
// warns.
TEST_F(DurableFaultTest, ACloseWhoseCheckpointFailedLeavesTheWarning) {
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(SyncMode::kNone));
    for (int i = 0; i < 3; ++i) ASSERT_OK(bus->Publish(NewEvent("s", i)));  // The head lags.
    store_->FailNthWrite(1, absl::UnavailableError("disk full"));
    EXPECT_FALSE(bus->Close().ok());
  }
  store_->Reopen();
  ASSERT_OK(Open().status());
  EXPECT_EQ(UncleanWarnings(*logger_, "sync=interval or none"), 1);
}

TEST(RuntimeWarningTest, TheMessageIsEscapedIntoValidJson) {
  const Event warning = durable::RuntimeWarning("a \"quoted\" path C:\\x\nand a new line");
  EXPECT_EQ(warning.stream, "keel.runtime");
  EXPECT_EQ(warning.type, "runtime.warning");
  EXPECT_EQ(warning.payload,
            "{\"driver\":\"durable\",\"message\":\"a \\\"quoted\\\" path C:\\\\x\\u000aand a new "
            "line\"}");
}

}  // namespace
}  // namespace keel::testing
