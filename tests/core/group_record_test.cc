// The consumer-group record's text form: round trip, and a strict parser
// that reports torn or edited records as data loss.
#include "keel/core/group_record.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "keel/core/fnv.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel {
namespace {

GroupRecord Sample() {
  GroupRecord record;
  record.epoch = 0x0123456789abcdef;
  record.committed = 41;
  record.last_token = 7;
  record.lease_token = 7;
  record.lease_expires = absl::FromUnixNanos(1'700'000'000'123'456'789);
  record.lease_from = 41;
  record.lease_to = 60;
  return record;
}

TEST(GroupRecordTest, RoundTrips) {
  ASSERT_OK_AND_ASSIGN(GroupRecord decoded, GroupRecord::Decode(Sample().Encode()));
  EXPECT_EQ(decoded, Sample());
  GroupRecord ended = Sample();
  ended.EndLease();
  ASSERT_OK_AND_ASSIGN(decoded, GroupRecord::Decode(ended.Encode()));
  EXPECT_EQ(decoded, ended);
  EXPECT_FALSE(decoded.HasLease());
}

TEST(GroupRecordTest, EditedOrTornRecordsAreDataLoss) {
  const std::string text = Sample().Encode();
  std::string edited = text;
  edited[text.find(" 41 ") + 1] = '5';  // "51": another cursor.
  EXPECT_EQ(GroupRecord::Decode(edited).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(GroupRecord::Decode(text.substr(0, text.size() - 3)).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(GroupRecord::Decode("").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(GroupRecord::Decode("g2 1 2 3 4 5 6 00000000").status().code(),
            absl::StatusCode::kDataLoss);
}

// A record written before stores had several epochs (version g1, no epoch
// field) still reads, as epoch 0: the store's first.
TEST(GroupRecordTest, ARecordWithoutAnEpochReadsAsEpochZero) {
  const std::string body = "g1 41 7 7 1700000000123456789 41 60";
  const std::string text = absl::StrCat(body, " ", absl::StrFormat("%08x", Fnv1a32(body)));
  ASSERT_OK_AND_ASSIGN(GroupRecord decoded, GroupRecord::Decode(text));
  GroupRecord expected = Sample();
  expected.epoch = 0;
  EXPECT_EQ(decoded, expected);
  EXPECT_EQ(GroupRecord::Decode(absl::StrCat("g1 9 ", text)).status().code(),
            absl::StatusCode::kDataLoss);
}

TEST(GroupRecordTest, KeysSplitBackIntoStreamAndGroup) {
  EXPECT_EQ(GroupKey("orders", "team:billing"), "group/orders/team:billing");
  std::string stream, group;
  ASSERT_TRUE(ParseGroupKey("group/orders/team:billing", &stream, &group));
  EXPECT_EQ(stream, "orders");
  EXPECT_EQ(group, "team:billing");
  EXPECT_FALSE(ParseGroupKey("policy/orders", &stream, &group));
  EXPECT_FALSE(ParseGroupKey("group/orders/", &stream, &group));
}

}  // namespace
}  // namespace keel
