// Deleting a durable stream (EventBus::DeleteStream) when a store write
// fails at each step: publishes to it are refused until the deletion is
// finished, and the next open finishes it, leaving no entry, key, group,
// declaration or tombstone of the stream behind.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "keel/core/errors.h"
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
using ::testing::IsEmpty;

// Store writes a deletion of "s" makes here, the tombstone first: fail
// write n (1-based) for n in 1..kDeletionWrites, or none beyond.
constexpr int kDeletionWrites = 7;

class InterruptedDeletionTest : public ::testing::TestWithParam<int> {
 protected:
  absl::StatusOr<std::unique_ptr<EventBus>> Open() {
    return OpenDurableBus(store_, Options(), DriverContext{});
  }

  // The stream with a declaration, a keyed event, a committed group.
  static void Populate(EventBus& bus) {
    ASSERT_OK(bus.Declare("s", StreamPolicy::Parse("dedupe_window=1h").value()));
    for (int i = 1; i <= 9; ++i) ASSERT_OK(bus.Publish(NewEvent("s", i)).status());
    ASSERT_OK(bus.Publish(Keyed()).status());
    ConsumeRequest request;
    request.stream = "s";
    request.group = "g";
    ASSERT_OK_AND_ASSIGN(ConsumePage page, bus.groups()->Consume(request));
    ASSERT_OK(bus.groups()->Commit("s", "g", page.lease.to, page.lease.token));
  }

  static Event Keyed() {
    Event event = NewEvent("s", 10);
    event.idempotency_key = "k";
    return event;
  }

  // Keys of the store that start with `prefix`.
  std::vector<std::string> KeysFrom(const std::string& prefix) {
    std::vector<std::string> keys;
    std::unique_ptr<StoreIterator> it = store_->NewIterator(KeyRange::Prefix(prefix));
    for (it->Seek(prefix); it->Valid(); it->Next()) keys.emplace_back(it->key());
    EXPECT_OK(it->status());
    return keys;
  }

  std::shared_ptr<FaultInjectingStore> store_ =
      std::make_shared<FaultInjectingStore>(std::make_unique<MemoryStore>());
};

TEST_P(InterruptedDeletionTest, PublishesWaitForItAndTheNextOpenFinishesIt) {
  const int failing = GetParam();
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open());
    Populate(*bus);
    store_->FailNthWrite(failing, absl::UnavailableError("disk full"));
    absl::StatusOr<DeletionReport> deleted = bus->DeleteStream("s");
    store_->ClearWriteFaults();
    if (failing > kDeletionWrites) {
      ASSERT_OK(deleted.status());
    } else {
      EXPECT_THAT(deleted.status(), StatusIs(absl::StatusCode::kUnavailable));
    }
    if (!deleted.ok() && failing > 1) {
      // Halfway: the stream takes nothing until the deletion is finished.
      EXPECT_THAT(bus->Publish(NewEvent("s", 11)).status(),
                  StatusIs(absl::StatusCode::kUnavailable));
    }
  }
  store_->Reopen();
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  ASSERT_OK_AND_ASSIGN(std::vector<Event> events, ReadAll(*bus, "s"));
  if (failing == 1) {  // The tombstone was never written: nothing was deleted.
    EXPECT_THAT(Sequences(events), ElementsAreArray(Range(1, 10)));
    return;
  }
  EXPECT_THAT(events, IsEmpty());
  EXPECT_THAT(KeysFrom(durable::EntryRange("s").start), IsEmpty());
  EXPECT_THAT(KeysFrom(durable::DedupeKey("s", "")), IsEmpty());
  EXPECT_THAT(KeysFrom("Xdeleting/"), IsEmpty());
  EXPECT_THAT(KeysFrom("Xgroup/s/"), IsEmpty());
  EXPECT_THAT(KeysFrom("Xpolicy/s"), IsEmpty());
  ASSERT_OK_AND_ASSIGN(auto listed, bus->replayer()->ListStreams("", 10));
  EXPECT_THAT(listed, IsEmpty());
  // A new incarnation: past the old sequences, and the old key is free.
  ASSERT_OK_AND_ASSIGN(Receipt again, bus->Publish(Keyed()));
  EXPECT_FALSE(again.duplicate);
  EXPECT_EQ(again.sequence, 12u);
}

TEST_F(InterruptedDeletionTest, DeletingAgainFinishesAHalfDoneDeletion) {
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  Populate(*bus);
  // The last write, the tombstone's delete: all else is gone, and only the
  // tombstone says the deletion is unfinished.
  store_->FailNthWrite(kDeletionWrites, absl::UnavailableError("disk full"));
  EXPECT_THAT(bus->DeleteStream("s").status(), StatusIs(absl::StatusCode::kUnavailable));
  store_->ClearWriteFaults();
  ASSERT_OK_AND_ASSIGN(DeletionReport finished, bus->DeleteStream("s"));
  EXPECT_THAT(finished.streams, ::testing::Contains("s"));
  ASSERT_OK_AND_ASSIGN(std::vector<Event> events, ReadAll(*bus, "s"));
  EXPECT_THAT(events, IsEmpty());
  EXPECT_THAT(KeysFrom("Xdeleting/"), IsEmpty());
  ASSERT_OK_AND_ASSIGN(Receipt fresh, bus->Publish(Keyed()));
  EXPECT_FALSE(fresh.duplicate);
  EXPECT_EQ(fresh.sequence, 12u);
}

INSTANTIATE_TEST_SUITE_P(EachWrite, InterruptedDeletionTest,
                         ::testing::Range(1, kDeletionWrites + 2));

}  // namespace
}  // namespace keel::testing
