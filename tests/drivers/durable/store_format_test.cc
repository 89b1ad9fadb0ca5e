// Store format versions: entries of version-2 stores carry CRC32C, those of
// version-1 stores FNV-1a; a version-1 store written by an earlier Keel
// still opens, replays and takes new events; an unknown version fails loudly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "keel/core/logger.h"
#include "keel/drivers/durable/crc32c.h"
#include "keel/drivers/durable/key_layout.h"
#include "keel/statestore/memory/memory_store.h"
#include "keel/tests/drivers/durable/durable_test_util.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::testing {
namespace {

using durable::StoreFormat;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

TEST(Crc32cTest, MatchesTheStandardCheckValue) {
  EXPECT_EQ(durable::Crc32c("123456789"), 0xe3069283u);
  EXPECT_EQ(durable::Crc32cPortable("123456789"), 0xe3069283u);
  EXPECT_EQ(durable::Crc32c(""), 0u);
}

TEST(Crc32cTest, AcceleratedAndPortablePathsAgree) {
  std::string bytes;
  for (int i = 0; i < 1000; ++i) {
    bytes.push_back(static_cast<char>(i * 131 + 7));
    // Every length and alignment of the 8-byte loop and its tail.
    absl::string_view view(bytes);
    EXPECT_EQ(durable::Crc32c(view.substr(i % 8)), durable::Crc32cPortable(view.substr(i % 8)));
  }
}

TEST(StoreFormatTest, EntryChecksumFollowsTheFormat) {
  Event event = NewEvent("s", 1);
  event.time = absl::FromUnixSeconds(1);
  const std::string v1 = durable::EncodeEntry(event, StoreFormat::kFnv1a);
  const std::string v2 = durable::EncodeEntry(event, StoreFormat::kCrc32c);
  EXPECT_EQ(v1.substr(4), v2.substr(4));  // Same envelope, other checksum.
  EXPECT_OK(durable::DecodeEntry("s", 1, v1, StoreFormat::kFnv1a));
  EXPECT_OK(durable::DecodeEntry("s", 1, v2, StoreFormat::kCrc32c));
  EXPECT_THAT(durable::DecodeEntry("s", 1, v1, StoreFormat::kCrc32c),
              StatusIs(absl::StatusCode::kDataLoss));
}

TEST(StoreFormatTest, MetaRecordsTheFormat) {
  for (StoreFormat format : {StoreFormat::kFnv1a, StoreFormat::kCrc32c}) {
    ASSERT_OK_AND_ASSIGN(durable::StoreMeta meta,
                         durable::DecodeMeta(durable::EncodeMeta(
                             {.epoch = 42, .format = format, .earlier_epochs = {}})));
    EXPECT_EQ(meta.format, format);
    EXPECT_EQ(meta.epoch, 42u);
  }
}

class StoreFormatBusTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::unique_ptr<EventBus>> Open() {
    DriverContext context;
    context.logger = std::make_shared<CapturingLogger>();
    DurableOptions options = Options();
    options.close_store = false;  // Reopened by the same test.
    return OpenDurableBus(store_, options, context);
  }

  std::shared_ptr<MemoryStore> store_ = std::make_shared<MemoryStore>();
};

TEST_F(StoreFormatBusTest, NewStoresUseTheCurrentFormat) {
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  ASSERT_OK_AND_ASSIGN(std::string meta, store_->Get(durable::MetaKey()));
  ASSERT_OK_AND_ASSIGN(durable::StoreMeta decoded, durable::DecodeMeta(meta));
  EXPECT_EQ(decoded.format, StoreFormat::kCrc32c);
}

TEST_F(StoreFormatBusTest, VersionOneStoreIsReadAndAppendedWithItsChecksum) {
  // A store as an earlier Keel wrote it: meta version 1, FNV-1a entries.
  WriteBatch batch;
  batch.Put(durable::MetaKey(),
            durable::EncodeMeta({.epoch = 7, .format = StoreFormat::kFnv1a, .earlier_epochs = {}}));
  durable::Head head;
  for (uint64_t seq = 1; seq <= 3; ++seq) {
    Event event = NewEvent("old", static_cast<int>(seq));
    event.time = absl::FromUnixSeconds(100);
    if (head.count() == 0) head.oldest_time = event.time;
    head.bytes += event.ApproximateSize();
    head.next = seq + 1;
    batch.Put(durable::EntryKey("old", seq), durable::EncodeEntry(event, StoreFormat::kFnv1a));
  }
  batch.Put(durable::HeadKey("old"), durable::EncodeHead(head));
  ASSERT_OK(store_->Write(batch, WriteOptions{.sync = true}));

  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open());
    ASSERT_OK_AND_ASSIGN(Receipt next, bus->Publish(NewEvent("old", 4)));
    EXPECT_EQ(next.sequence, 4u);
  }
  ASSERT_OK_AND_ASSIGN(auto bus, Open());  // Reopened: still version 1, all readable.
  ASSERT_OK_AND_ASSIGN(std::vector<Event> all, ReadAll(*bus, "old"));
  EXPECT_THAT(Sequences(all), ElementsAreArray(Range(1, 4)));
  ASSERT_OK_AND_ASSIGN(std::string value, store_->Get(durable::EntryKey("old", 4)));
  EXPECT_OK(durable::DecodeEntry("old", 4, value, StoreFormat::kFnv1a));
}

TEST_F(StoreFormatBusTest, UnknownVersionFailsOpenLoudly) {
  std::string meta =
      durable::EncodeMeta({.epoch = 7, .format = StoreFormat::kCrc32c, .earlier_epochs = {}});
  meta[0] = 3;  // A format from the future (its checksum is not checked first).
  WriteBatch batch;
  batch.Put(durable::MetaKey(), meta);
  ASSERT_OK(store_->Write(batch, WriteOptions{.sync = true}));
  absl::StatusOr<std::unique_ptr<EventBus>> bus = Open();
  EXPECT_THAT(bus, StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(std::string(bus.status().message()), HasSubstr("unknown format version 3"));
}

}  // namespace
}  // namespace keel::testing
