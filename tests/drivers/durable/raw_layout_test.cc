// raw_layout.h, what the raw baselines of `keel-bench storage` write: the
// records the driver writes, byte for byte, so that a baseline and the
// driver differ only in Keel's layers; and a store written with them is one
// the driver opens and reads (the benchmark's reopen stores).
#include "keel/drivers/durable/raw_layout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "keel/core/clock.h"
#include "keel/core/publish_validation.h"
#include "keel/statestore/memory/memory_store.h"
#include "keel/tests/drivers/durable/durable_test_util.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;
namespace raw = durable::raw;

class RawLayoutTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::unique_ptr<EventBus>> Open() {
    DriverContext context;
    context.clock = &clock_;
    DurableOptions options = Options();
    options.close_store = false;  // The test reads the store afterwards.
    options.verify_in_background = false;
    return OpenDurableBus(store_, options, context);
  }

  // An event as the benchmark publishes it: its id is set beforehand.
  Event BenchEvent(absl::string_view stream, int n) {
    Event event = NewEvent(stream, n);
    event.content_type = "application/octet-stream";
    event.id = NewEventId(clock_.Now());
    return event;
  }

  // `event` as stored: with the publish time the bus takes from its clock.
  Event Published(Event event) {
    event.time = clock_.Now();
    return event;
  }

  ManualClock clock_;
  std::shared_ptr<MemoryStore> store_ = std::make_shared<MemoryStore>();
};

TEST_F(RawLayoutTest, TheDriverWritesTheRecordsOfTheRawLayout) {
  const Event first = BenchEvent("s", 1);
  const Event second = BenchEvent("s", 2);
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open());
    ASSERT_OK(bus->Publish(first));
    ASSERT_OK(bus->Publish(second));
    ASSERT_OK(bus->Close());
  }
  ASSERT_OK_AND_ASSIGN(std::string entry1, store_->Get(raw::EntryKey("s", 1)));
  ASSERT_OK_AND_ASSIGN(std::string entry2, store_->Get(raw::EntryKey("s", 2)));
  EXPECT_EQ(entry1, raw::EntryValue(Published(first)));
  EXPECT_EQ(entry2, raw::EntryValue(Published(second)));
  raw::RawHead head;
  head.next = 3;
  head.bytes = Published(first).ApproximateSize() + Published(second).ApproximateSize();
  head.oldest_time = clock_.Now();
  ASSERT_OK_AND_ASSIGN(std::string stored_head, store_->Get(raw::HeadKey("s")));
  EXPECT_EQ(stored_head, raw::HeadValue(head));

  // The entries, and only they, start with the entry prefix (the raw
  // replay baseline scans those keys).
  std::vector<std::string> prefixed;
  std::unique_ptr<StoreIterator> it = store_->NewIterator(KeyRange{"", ""});
  for (it->Seek(""); it->Valid(); it->Next()) {
    if (absl::StartsWith(it->key(), raw::EntryKeyPrefix())) prefixed.emplace_back(it->key());
  }
  ASSERT_OK(it->status());
  EXPECT_THAT(prefixed, UnorderedElementsAre(raw::EntryKey("s", 1), raw::EntryKey("s", 2)));
}

TEST_F(RawLayoutTest, TheDriverReadsAStoreWrittenInTheRawLayout) {
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open());  // Writes the store's meta record.
    ASSERT_OK(bus->Close());
  }
  const Event first = Published(BenchEvent("s", 1));
  const Event second = Published(BenchEvent("s", 2));
  raw::RawHead head;
  head.next = 3;
  head.bytes = first.ApproximateSize() + second.ApproximateSize();
  head.oldest_time = clock_.Now();
  WriteBatch batch;
  batch.Put(raw::EntryKey("s", 1), raw::EntryValue(first));
  batch.Put(raw::EntryKey("s", 2), raw::EntryValue(second));
  batch.Put(raw::HeadKey("s"), raw::HeadValue(head));
  ASSERT_OK(store_->Write(batch, WriteOptions{.sync = true}));

  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  ASSERT_OK_AND_ASSIGN(std::vector<Event> events, ReadAll(*bus, "s"));
  EXPECT_THAT(Sequences(events), ElementsAre(1, 2));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].id, first.id);
  EXPECT_EQ(events[1].payload, second.payload);
  ASSERT_OK(bus->Close());
}

// The benchmark writes a stream's lagging head at the driver's checkpoints,
// which come every DurableOptions::head_checkpoint_bytes by default.
TEST(HeadCheckpointRuleTest, ComesAtTheDriversDefaultInterval) {
  const uint64_t interval = DurableOptions().head_checkpoint_bytes;
  raw::HeadCheckpointRule rule;
  EXPECT_FALSE(rule.Lagging("s"));
  EXPECT_FALSE(rule.Due(1000));
  rule.Committed(false, {"s"}, 1000);
  EXPECT_TRUE(rule.Lagging("s")) << "its head was not written";
  EXPECT_FALSE(rule.Due(interval - 1001));
  EXPECT_TRUE(rule.Due(interval - 1000));
  rule.Committed(true, {}, interval - 1000);
  EXPECT_FALSE(rule.Lagging("s"));
  EXPECT_FALSE(rule.Due(1000)) << "a checkpoint starts the count again";
}

}  // namespace
}  // namespace keel::testing
