// Cold segments: what is written reads back whole and from any sequence,
// and every corruption, truncation or loss is a data-loss error naming the
// object, never a skipped entry.
#include "keel/coldstore/segment/segment.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "keel/coldstore/fs/fs_cold_store.h"
#include "keel/drivers/durable/crc32c.h"
#include "keel/tests/testing/status_matchers.h"
#include "keel/tests/testing/temp_dir.h"

namespace keel {
namespace {

using ::keel::testing::StatusIs;
using ::keel::testing::TempDir;
using ::testing::HasSubstr;

// A stored entry value as the durable driver writes one: check:u32be
// (CRC32C of the envelope) then the envelope.
std::string StoredValue(uint64_t sequence) {
  const std::string envelope =
      absl::StrCat("envelope of event ", sequence, std::string(sequence % 7, 'x'));
  const uint32_t check = durable::Crc32c(envelope);
  std::string value;
  for (int shift = 24; shift >= 0; shift -= 8) value.push_back(static_cast<char>(check >> shift));
  return value + envelope;
}

absl::Time TimeOf(uint64_t sequence) {
  return absl::FromUnixMillis(1700000000000 + static_cast<int64_t>(sequence) * 3);
}

EncodedSegment Build(uint64_t first, uint64_t last, uint32_t per_block,
                     absl::string_view stream = "orders") {
  SegmentWriter writer(std::string(stream), 7, EntryCheck::kCrc32c, per_block);
  for (uint64_t s = first; s <= last; ++s) {
    EXPECT_OK(writer.Add(s, TimeOf(s), StoredValue(s)));
  }
  auto segment = writer.Finish();
  EXPECT_TRUE(segment.ok()) << segment.status();
  return *std::move(segment);
}

TEST(SegmentTest, RoundTripsEveryEntryWithItsHeader) {
  EncodedSegment segment = Build(101, 300, 16);
  ASSERT_OK_AND_ASSIGN(DecodedSegment decoded, DecodeSegment(segment.bytes, segment.object_name));
  EXPECT_EQ(decoded.header, segment.header);
  EXPECT_EQ(decoded.header.stream, "orders");
  EXPECT_EQ(decoded.header.epoch, 7u);
  EXPECT_EQ(decoded.header.count, 200u);
  EXPECT_EQ(decoded.header.min_time, TimeOf(101));
  EXPECT_EQ(decoded.header.max_time, TimeOf(300));
  ASSERT_EQ(decoded.entries.size(), 200u);
  for (uint64_t s = 101; s <= 300; ++s) {
    const SegmentEntry& entry = decoded.entries[s - 101];
    EXPECT_EQ(entry.sequence, s);
    EXPECT_EQ(entry.time, TimeOf(s));
    EXPECT_EQ(entry.value, StoredValue(s));
  }
}

TEST(SegmentTest, TheNameDependsOnlyOnTheContent) {
  EncodedSegment a = Build(1, 50, 8);
  EncodedSegment again = Build(1, 50, 8);
  EXPECT_EQ(a.object_name, again.object_name);
  EXPECT_EQ(a.bytes, again.bytes);
  ASSERT_OK_AND_ASSIGN(SegmentName name, ParseSegmentObjectName(a.object_name));
  EXPECT_EQ(name.stream, "orders");
  EXPECT_EQ(name.first, 1u);
  EXPECT_EQ(name.last, 50u);
  EXPECT_EQ(name.checksum, a.checksum);
  EXPECT_TRUE(absl::StartsWith(a.object_name, SegmentObjectPrefix("orders")));
  EXPECT_OK(ValidateObjectName(a.object_name));
  // Other bytes (here another block size) never share a name.
  EXPECT_NE(Build(1, 50, 9).object_name, a.object_name);
}

TEST(SegmentTest, TheWriterRefusesGapsAndCorruptEntries) {
  SegmentWriter writer("s", 1, EntryCheck::kCrc32c);
  ASSERT_OK(writer.Add(5, TimeOf(5), StoredValue(5)));
  EXPECT_THAT(writer.Add(7, TimeOf(7), StoredValue(7)),
              StatusIs(absl::StatusCode::kInvalidArgument));
  std::string bad = StoredValue(6);
  bad.back() ^= 1;
  EXPECT_THAT(writer.Add(6, TimeOf(6), bad), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(SegmentWriter("s", 1, EntryCheck::kCrc32c).Finish(),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST(SegmentTest, EveryFlippedByteIsDetected) {
  EncodedSegment segment = Build(1, 12, 4);
  for (size_t i = 0; i < segment.bytes.size(); ++i) {
    std::string corrupt = segment.bytes;
    corrupt[i] ^= 0x20;
    EXPECT_THAT(DecodeSegment(corrupt, segment.object_name), StatusIs(absl::StatusCode::kDataLoss))
        << "byte " << i;
    // Without the name's checksum to compare, the segment's own checks
    // still catch it.
    EXPECT_THAT(DecodeSegment(corrupt), StatusIs(absl::StatusCode::kDataLoss)) << "byte " << i;
  }
}

TEST(SegmentTest, EveryTruncationIsDetected) {
  EncodedSegment segment = Build(1, 12, 4);
  for (size_t size = 0; size < segment.bytes.size(); ++size) {
    EXPECT_THAT(DecodeSegment(segment.bytes.substr(0, size), segment.object_name),
                StatusIs(absl::StatusCode::kDataLoss))
        << "size " << size;
  }
}

TEST(SegmentTest, ASegmentUnderAnotherNameIsDetected) {
  EncodedSegment segment = Build(1, 12, 4);
  auto renamed =
      DecodeSegment(segment.bytes, SegmentObjectName("orders", 1, 12, segment.checksum + 1));
  EXPECT_THAT(renamed, StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(DecodeSegment(segment.bytes, SegmentObjectName("other", 1, 12, segment.checksum)),
              StatusIs(absl::StatusCode::kDataLoss));
}

class SegmentReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = FsColdStore::Open(dir_.Sub("cold"));
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(store).value();
    segment_ = Build(1001, 1500, 32);
    ASSERT_OK(store_->PutIfAbsent(segment_.object_name, segment_.bytes));
  }

  std::string PathOf(const std::string& name) { return dir_.Sub("cold/" + name); }

  TempDir dir_;
  std::unique_ptr<FsColdStore> store_;
  EncodedSegment segment_;
};

TEST_F(SegmentReaderTest, ReadsFromAnySequenceThroughTheSparseIndex) {
  ASSERT_OK_AND_ASSIGN(SegmentReader reader, SegmentReader::Open(*store_, segment_.object_name));
  EXPECT_EQ(reader.header(), segment_.header);
  for (uint64_t from : {1001u, 1002u, 1031u, 1032u, 1033u, 1250u, 1499u, 1500u}) {
    ASSERT_OK_AND_ASSIGN(std::vector<SegmentEntry> entries, reader.ReadFrom(from));
    ASSERT_EQ(entries.size(), 1500 - from + 1) << from;
    EXPECT_EQ(entries.front().sequence, from);
    EXPECT_EQ(entries.front().value, StoredValue(from));
    EXPECT_EQ(entries.back().sequence, 1500u);
  }
  EXPECT_THAT(reader.ReadFrom(1000), StatusIs(absl::StatusCode::kOutOfRange));
  EXPECT_THAT(reader.ReadFrom(1501), StatusIs(absl::StatusCode::kOutOfRange));
}

TEST_F(SegmentReaderTest, AMissingSegmentIsDataLossNamingIt) {
  ASSERT_OK(store_->Delete(segment_.object_name));
  auto opened = SegmentReader::Open(*store_, segment_.object_name);
  EXPECT_THAT(opened, StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(opened.status().message(), HasSubstr(segment_.object_name));
}

TEST_F(SegmentReaderTest, ACorruptBlockFailsTheReadNamingTheSegment) {
  ASSERT_OK_AND_ASSIGN(SegmentReader reader, SegmentReader::Open(*store_, segment_.object_name));
  // Flip a byte in the middle of the entries, behind the store's back.
  std::string bytes = segment_.bytes;
  bytes[bytes.size() / 2] ^= 1;
  ASSERT_OK(store_->Delete(segment_.object_name));
  ASSERT_OK(store_->PutIfAbsent(segment_.object_name, bytes));
  auto read = reader.ReadFrom(1001);
  EXPECT_THAT(read, StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(read.status().message(), HasSubstr(segment_.object_name));
}

TEST_F(SegmentReaderTest, ATruncatedSegmentIsDataLoss) {
  ASSERT_OK(store_->Delete(segment_.object_name));
  ASSERT_OK(store_->PutIfAbsent(segment_.object_name,
                                segment_.bytes.substr(0, segment_.bytes.size() - 100)));
  EXPECT_THAT(SegmentReader::Open(*store_, segment_.object_name),
              StatusIs(absl::StatusCode::kDataLoss));
  // Opened with the size the caller recorded: the short object is caught.
  EXPECT_THAT(SegmentReader::Open(*store_, segment_.object_name, segment_.bytes.size()),
              StatusIs(absl::StatusCode::kDataLoss));
}

}  // namespace
}  // namespace keel
