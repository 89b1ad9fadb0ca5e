// StreamPolicy's text form (the config file, CLI and stored form), the
// differing-field report behind resource_drift, declarations as written in
// a config file, and the documented partition hash.
#include "keel/core/stream_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "keel/core/errors.h"
#include "keel/core/topic.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel {
namespace {

using ::keel::testing::HasErrorKind;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(StreamPolicyTest, ParsesEveryKeyWithUnits) {
  ASSERT_OK_AND_ASSIGN(
      StreamPolicy policy,
      StreamPolicy::Parse("max_age=168h max_bytes=1GiB max_events=1000 max_payload_bytes=64KiB "
                          "dedupe_window=5m dead_letter.max_age=720h dead_letter.max_bytes=10MiB "
                          "dead_letter.max_events=5 partitions=8"));
  EXPECT_EQ(policy.retention.max_age, absl::Hours(168));
  EXPECT_EQ(policy.retention.max_bytes, 1ull << 30);
  EXPECT_EQ(policy.retention.max_events, 1000u);
  EXPECT_EQ(policy.max_payload_bytes, 64u << 10);
  EXPECT_EQ(policy.dedupe_window, absl::Minutes(5));
  EXPECT_EQ(policy.dead_letter_retention.max_age, absl::Hours(720));
  EXPECT_EQ(policy.dead_letter_retention.max_bytes, 10u << 20);
  EXPECT_EQ(policy.dead_letter_retention.max_events, 5u);
  EXPECT_EQ(policy.partitions, 8u);
}

TEST(StreamPolicyTest, AbsentKeysKeepDefaultsAndTheTextFormRoundTrips) {
  ASSERT_OK_AND_ASSIGN(StreamPolicy empty, StreamPolicy::Parse("  "));
  EXPECT_EQ(empty, StreamPolicy{});
  EXPECT_EQ(empty.max_payload_bytes, 128u * 1024);
  EXPECT_EQ(empty.dedupe_window, absl::Minutes(2));
  ASSERT_OK_AND_ASSIGN(StreamPolicy policy, StreamPolicy::Parse("max_events=3 partitions=2"));
  ASSERT_OK_AND_ASSIGN(StreamPolicy again, StreamPolicy::Parse(policy.ToString()));
  EXPECT_EQ(again, policy);
}

// The hot window is its own bound; the total retention is untouched by it,
// and a policy without hot keys has no hot bound.
TEST(StreamPolicyTest, HotKeysBoundTheHotWindowApartFromTheTotalRetention) {
  ASSERT_OK_AND_ASSIGN(StreamPolicy policy,
                       StreamPolicy::Parse("max_events=1000000 hot.max_age=1h "
                                           "hot.max_bytes=64MiB hot.max_events=5000"));
  EXPECT_EQ(policy.hot.max_age, absl::Hours(1));
  EXPECT_EQ(policy.hot.max_bytes, 64u << 20);
  EXPECT_EQ(policy.hot.max_events, 5000u);
  EXPECT_EQ(policy.retention.max_events, 1000000u);
  EXPECT_EQ(policy.retention.max_age, absl::ZeroDuration());
  ASSERT_OK_AND_ASSIGN(StreamPolicy again, StreamPolicy::Parse(policy.ToString()));
  EXPECT_EQ(again, policy);
  ASSERT_OK_AND_ASSIGN(StreamPolicy plain, StreamPolicy::Parse("max_events=10"));
  EXPECT_TRUE(plain.hot.unbounded());
  EXPECT_THAT(
      DifferingFields(plain, policy),
      ::testing::ElementsAre("max_events", "hot.max_age", "hot.max_bytes", "hot.max_events"));
  EXPECT_THAT(std::string(StreamPolicy::Parse("hot.max_events=many").status().message()),
              HasSubstr("hot.max_events"));
}

TEST(StreamPolicyTest, BadInputNamesTheKey) {
  EXPECT_THAT(StreamPolicy::Parse("max_evnts=1").status(),
              HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(std::string(StreamPolicy::Parse("max_evnts=1").status().message()),
              HasSubstr("max_evnts"));
  EXPECT_THAT(std::string(StreamPolicy::Parse("max_events=1 max_events=2").status().message()),
              HasSubstr("twice"));
  EXPECT_THAT(std::string(StreamPolicy::Parse("max_bytes=lots").status().message()),
              HasSubstr("max_bytes"));
  EXPECT_THAT(std::string(StreamPolicy::Parse("max_age=-1s").status().message()),
              HasSubstr("max_age"));
  EXPECT_THAT(std::string(StreamPolicy::Parse("partitions=5000").status().message()),
              HasSubstr("partitions"));
  EXPECT_THAT(std::string(StreamPolicy::Parse("max_payload_bytes=10").status().message()),
              HasSubstr("max_payload_bytes"));
  EXPECT_FALSE(StreamPolicy::Parse("max_events").ok());
}

TEST(StreamPolicyTest, DifferingFieldsListsExactlyTheChangedKeys) {
  ASSERT_OK_AND_ASSIGN(StreamPolicy a, StreamPolicy::Parse("max_events=1 dedupe_window=1m"));
  ASSERT_OK_AND_ASSIGN(StreamPolicy b, StreamPolicy::Parse("max_events=2 partitions=3 dedupe_window=1m"));
  EXPECT_THAT(DifferingFields(a, b), ElementsAre("max_events", "partitions"));
  EXPECT_TRUE(DifferingFields(a, a).empty());
}

TEST(StreamPolicyTest, RetentionLimitsExceeded) {
  RetentionLimits limits;
  const absl::Time now = absl::FromUnixSeconds(1000);
  EXPECT_FALSE(limits.Exceeded(1'000'000, 1ull << 40, absl::InfinitePast(), now));
  limits.max_events = 10;
  EXPECT_FALSE(limits.Exceeded(10, 0, now, now));
  EXPECT_TRUE(limits.Exceeded(11, 0, now, now));
  limits = RetentionLimits{};
  limits.max_age = absl::Seconds(60);
  EXPECT_FALSE(limits.Exceeded(1, 0, now - absl::Seconds(60), now));
  EXPECT_TRUE(limits.Exceeded(1, 0, now - absl::Seconds(61), now));
  EXPECT_FALSE(limits.Exceeded(0, 0, now - absl::Hours(1), now)) << "an empty stream is within";
}

TEST(StreamDeclarationTest, ParsesNameThenPolicy) {
  ASSERT_OK_AND_ASSIGN(StreamDeclaration declaration,
                       StreamDeclaration::Parse("  orders max_events=5  "));
  EXPECT_EQ(declaration.stream, "orders");
  EXPECT_EQ(declaration.policy.retention.max_events, 5u);
  ASSERT_OK_AND_ASSIGN(StreamDeclaration bare, StreamDeclaration::Parse("audit"));
  EXPECT_EQ(bare.policy, StreamPolicy{});
  EXPECT_FALSE(StreamDeclaration::Parse("bad/name max_events=1").ok());
}

TEST(PartitionOfTest, IsTheDocumentedFnv1a64Modulo) {
  // FNV-1a-64("a") = 0xaf63dc4c8601ec8c (offset basis 14695981039346656037,
  // prime 1099511628211), as any client can compute.
  EXPECT_EQ(PartitionOf("a", 1000), 0xaf63dc4c8601ec8cull % 1000);
  EXPECT_EQ(PartitionOf("", 7), 14695981039346656037ull % 7);
  EXPECT_EQ(PartitionStream("orders", 3), "orders:3");
}

}  // namespace
}  // namespace keel
