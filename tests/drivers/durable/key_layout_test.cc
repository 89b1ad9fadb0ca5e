// The durable key layout: records round-trip, entry keys sort by sequence
// within a stream and never interleave with another stream's, and every
// damaged record is rejected.
#include "keel/drivers/durable/key_layout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "keel/core/fnv.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::durable {
namespace {

using ::keel::testing::StatusIs;

TEST(KeyLayoutTest, EntryKeysSortNumericallyWithinAStream) {
  EXPECT_LT(EntryKey("s", 255), EntryKey("s", 256));
  EXPECT_LT(EntryKey("s", 1), EntryKey("s", 1ull << 40));
  // "s" and "s.x" never interleave: 0x00 sorts before every name character.
  EXPECT_LT(EntryKey("s", UINT64_MAX), EntryKey("s.x", 1));
  KeyRange range = EntryRange("s");
  EXPECT_GE(EntryKey("s", 1), range.start);
  EXPECT_LT(EntryKey("s", UINT64_MAX), range.limit);
  EXPECT_FALSE(EntryKey("s.x", 1) < range.limit && EntryKey("s.x", 1) >= range.start);
}

TEST(KeyLayoutTest, EntrySequenceParsesKeys) {
  ASSERT_OK_AND_ASSIGN(uint64_t seq, EntrySequence(EntryKey("orders", 123456789)));
  EXPECT_EQ(seq, 123456789u);
  EXPECT_THAT(EntrySequence("Eorders"), StatusIs(absl::StatusCode::kDataLoss));
}

TEST(KeyLayoutTest, HeadRoundTripsAndRejectsDamage) {
  Head head{5, 42, 9000, absl::FromUnixNanos(1'700'000'000'123'456'789)};
  std::string encoded = EncodeHead(head);
  ASSERT_OK_AND_ASSIGN(Head decoded, DecodeHead(encoded));
  EXPECT_EQ(decoded, head);
  for (size_t i = 0; i < encoded.size(); ++i) {
    std::string damaged = encoded;
    damaged[i] ^= 0x01;
    EXPECT_THAT(DecodeHead(damaged), StatusIs(absl::StatusCode::kDataLoss)) << "byte " << i;
  }
  EXPECT_THAT(DecodeHead(encoded.substr(1)), StatusIs(absl::StatusCode::kDataLoss));
}

TEST(KeyLayoutTest, MetaRoundTrips) {
  ASSERT_OK_AND_ASSIGN(
      StoreMeta meta,
      DecodeMeta(EncodeMeta(StoreMeta{
          .epoch = 0xfeedbeef12345678, .format = kCurrentStoreFormat, .earlier_epochs = {}})));
  EXPECT_EQ(meta.epoch, 0xfeedbeef12345678u);
  EXPECT_THAT(DecodeMeta("garbage"), StatusIs(absl::StatusCode::kDataLoss));
}

TEST(KeyLayoutTest, MetaKeepsEarlierEpochsInOrder) {
  StoreMeta meta;
  meta.epoch = 3;
  meta.format = StoreFormat::kFnv1a;
  meta.earlier_epochs = {9, 1};
  const std::string encoded = EncodeMeta(meta);
  EXPECT_EQ(encoded.size(), 13u + 16u);
  ASSERT_OK_AND_ASSIGN(StoreMeta decoded, DecodeMeta(encoded));
  EXPECT_EQ(decoded, meta);
  // A record cut inside an epoch fails, as does one whose bytes changed.
  EXPECT_THAT(DecodeMeta(encoded.substr(0, encoded.size() - 3)),
              StatusIs(absl::StatusCode::kDataLoss));
  meta.earlier_epochs = {9, 9};
  EXPECT_THAT(DecodeMeta(EncodeMeta(meta)), StatusIs(absl::StatusCode::kDataLoss));
  meta.earlier_epochs = {3};
  EXPECT_THAT(DecodeMeta(EncodeMeta(meta)), StatusIs(absl::StatusCode::kDataLoss));
  std::string flipped = encoded;
  flipped[12] ^= 1;
  EXPECT_THAT(DecodeMeta(flipped), StatusIs(absl::StatusCode::kDataLoss));
}

TEST(KeyLayoutTest, EpochStartKeysAndValuesRoundTrip) {
  const std::string key = EpochStartKey("orders", 0x0102030405060708);
  ASSERT_OK_AND_ASSIGN(auto parsed, ParseEpochStartKey(key));
  EXPECT_EQ(parsed.first, "orders");
  EXPECT_EQ(parsed.second, 0x0102030405060708u);
  EXPECT_EQ(PrintableKey(key), "Porders/72623859790382856");
  EXPECT_LE(EpochStartRange().start, key);
  EXPECT_LT(key, EpochStartRange().limit);
  EXPECT_THAT(ParseEpochStartKey("Porders"), StatusIs(absl::StatusCode::kDataLoss));
  ASSERT_OK_AND_ASSIGN(uint64_t first, DecodeEpochStart(EncodeEpochStart(42)));
  EXPECT_EQ(first, 42u);
  EXPECT_THAT(DecodeEpochStart(EncodeEpochStart(0)), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(DecodeEpochStart("x"), StatusIs(absl::StatusCode::kDataLoss));
}

TEST(KeyLayoutTest, OpenMarkerKeepsTheStoreLifetimeAndRejectsDamage) {
  const OpenMarker marker{.acks_synced = true, .lost = false, .lifetime = "0f4c-boot"};
  const std::string encoded = EncodeOpenMarker(marker);
  ASSERT_OK_AND_ASSIGN(OpenMarker decoded, DecodeOpenMarker(encoded));
  EXPECT_TRUE(decoded.acks_synced);
  EXPECT_FALSE(decoded.lost);
  EXPECT_EQ(decoded.lifetime, "0f4c-boot");
  const std::string longest(StateStore::kMaxLifetimeBytes, 'x');
  ASSERT_OK_AND_ASSIGN(decoded, DecodeOpenMarker(EncodeOpenMarker(OpenMarker{
                                    .acks_synced = false, .lost = true, .lifetime = longest})));
  EXPECT_FALSE(decoded.acks_synced);
  EXPECT_TRUE(decoded.lost);
  EXPECT_EQ(decoded.lifetime, longest);
  for (size_t i = 0; i < encoded.size(); ++i) {
    std::string damaged = encoded;
    damaged[i] ^= 0x01;
    EXPECT_THAT(DecodeOpenMarker(damaged), StatusIs(absl::StatusCode::kDataLoss)) << "byte " << i;
  }
  EXPECT_THAT(DecodeOpenMarker(""), StatusIs(absl::StatusCode::kDataLoss));
  // Too long to record: written as unknown, which the next open treats as
  // a machine that may have stopped.
  ASSERT_OK_AND_ASSIGN(
      decoded, DecodeOpenMarker(EncodeOpenMarker(
                   OpenMarker{.lifetime = std::string(StateStore::kMaxLifetimeBytes + 1, 'x')})));
  EXPECT_EQ(decoded.lifetime, "");
}

// Keel before lifetimes wrote version 1: version, acks_synced, checksum.
TEST(KeyLayoutTest, AnOpenMarkerWithoutALifetimeReadsAsUnknown) {
  const auto version_1 = [](bool acks_synced) {
    std::string marker = {1, static_cast<char>(acks_synced ? 1 : 0)};
    const uint32_t check = Fnv1a32(marker);
    for (int shift : {24, 16, 8, 0}) marker.push_back(static_cast<char>(check >> shift));
    return marker;
  };
  ASSERT_OK_AND_ASSIGN(OpenMarker decoded, DecodeOpenMarker(version_1(false)));
  EXPECT_FALSE(decoded.acks_synced);
  EXPECT_FALSE(decoded.lost);
  EXPECT_EQ(decoded.lifetime, "");
  // What that process acknowledged is still read.
  ASSERT_OK_AND_ASSIGN(decoded, DecodeOpenMarker(version_1(true)));
  EXPECT_TRUE(decoded.acks_synced);
  EXPECT_EQ(decoded.lifetime, "");
}

TEST(KeyLayoutTest, EntryRoundTripsWithStreamAndSequenceFromTheKey) {
  Event event;
  event.stream = "ignored";
  event.sequence = 77;
  event.id = "id-1";
  event.type = "order.created";
  event.tenant = "acme";
  event.time = absl::FromUnixMillis(1'700'000'000'000);
  event.payload = std::string("\0binary\xff", 8);
  event.content_type = "application/octet-stream";
  event.attributes = {{"k", "v"}};
  event.idempotency_key = "idem";
  std::string value = EncodeEntry(event);
  ASSERT_OK_AND_ASSIGN(Event decoded, DecodeEntry("orders", 9, value));
  Event expected = event;
  expected.stream = "orders";
  expected.sequence = 9;
  EXPECT_EQ(decoded, expected);

  std::string damaged = value;
  damaged.back() ^= 0x40;
  EXPECT_THAT(DecodeEntry("orders", 9, damaged), StatusIs(absl::StatusCode::kDataLoss));
}

TEST(KeyLayoutTest, PrintableKeyShowsStreamAndSequence) {
  EXPECT_EQ(PrintableKey(EntryKey("orders", 3)), "Eorders/3");
  EXPECT_EQ(PrintableKey(HeadKey("orders")), "Horders");
}

}  // namespace
}  // namespace keel::durable
