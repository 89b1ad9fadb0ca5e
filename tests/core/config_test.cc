// Config: typed accessors with fallbacks, and errors that name the option.
#include "keel/core/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "keel/core/errors.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel {
namespace {

using ::keel::testing::HasErrorKind;
using ::testing::HasSubstr;

TEST(ConfigTest, GetStringFallsBack) {
  Config config{{"name", "value"}};
  EXPECT_EQ(config.GetString("name", "fb"), "value");
  EXPECT_EQ(config.GetString("missing", "fb"), "fb");
  EXPECT_TRUE(config.Has("name"));
  EXPECT_FALSE(config.Has("missing"));
}

TEST(ConfigTest, GetUintParsesAndFallsBack) {
  Config config{{"n", "42"}, {"zero", "0"}, {"max", "18446744073709551615"}};
  EXPECT_EQ(config.GetUint("n", 7).value(), 42u);
  EXPECT_EQ(config.GetUint("zero", 7).value(), 0u);
  EXPECT_EQ(config.GetUint("max", 7).value(), UINT64_MAX);
  EXPECT_EQ(config.GetUint("missing", 7).value(), 7u);
}

TEST(ConfigTest, GetUintRejectsTextNamingTheKey) {
  for (const char* text : {"abc", "-1", "1.5", "", "12abc", "18446744073709551616"}) {
    Config config{{"max_events", text}};
    absl::StatusOr<uint64_t> value = config.GetUint("max_events", 1);
    EXPECT_THAT(value, HasErrorKind(ErrorKind::kInvalidArgument)) << text;
    EXPECT_THAT(value.status().message(), HasSubstr("max_events")) << text;
  }
}

TEST(ConfigTest, GetUintEnforcesBoundsNamingTheKey) {
  Config config{{"low", "0"}, {"high", "101"}, {"edge_low", "1"}, {"edge_high", "100"}};
  for (const char* key : {"low", "high"}) {
    absl::StatusOr<uint64_t> value = config.GetUint(key, 50, 1, 100);
    EXPECT_THAT(value, HasErrorKind(ErrorKind::kInvalidArgument)) << key;
    EXPECT_THAT(value.status().message(), HasSubstr(key));
  }
  EXPECT_EQ(config.GetUint("edge_low", 50, 1, 100).value(), 1u);
  EXPECT_EQ(config.GetUint("edge_high", 50, 1, 100).value(), 100u);
}

TEST(ConfigTest, GetBool) {
  Config config{{"t", "true"}, {"f", "false"}, {"one", "1"}, {"bad", "maybe"}};
  EXPECT_TRUE(config.GetBool("t", false).value());
  EXPECT_FALSE(config.GetBool("f", true).value());
  EXPECT_TRUE(config.GetBool("one", false).value());
  EXPECT_TRUE(config.GetBool("missing", true).value());
  absl::StatusOr<bool> bad = config.GetBool("bad", false);
  EXPECT_THAT(bad, HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(bad.status().message(), HasSubstr("bad"));
}

TEST(ConfigTest, GetDurationParsesUnits) {
  Config config{{"ms", "250ms"}, {"m", "2m"}, {"s", "1.5s"}, {"zero", "0"}};
  EXPECT_EQ(config.GetDuration("ms", absl::ZeroDuration()).value(), absl::Milliseconds(250));
  EXPECT_EQ(config.GetDuration("m", absl::ZeroDuration()).value(), absl::Minutes(2));
  EXPECT_EQ(config.GetDuration("s", absl::ZeroDuration()).value(), absl::Milliseconds(1500));
  EXPECT_EQ(config.GetDuration("zero", absl::Seconds(1)).value(), absl::ZeroDuration());
  EXPECT_EQ(config.GetDuration("missing", absl::Seconds(3)).value(), absl::Seconds(3));
}

TEST(ConfigTest, GetDurationRejectsBadAndNegativeValuesNamingTheKey) {
  for (const char* text : {"soon", "5", "-1s", "10 ms"}) {
    Config config{{"flush_interval", text}};
    absl::StatusOr<absl::Duration> value = config.GetDuration("flush_interval", absl::Seconds(1));
    EXPECT_THAT(value, HasErrorKind(ErrorKind::kInvalidArgument)) << text;
    EXPECT_THAT(value.status().message(), HasSubstr("flush_interval")) << text;
  }
}

TEST(ConfigTest, SetFromAssignmentTrimsAndOverrides) {
  Config config{{"a", "old"}};
  ASSERT_OK(config.SetFromAssignment("a=new"));
  ASSERT_OK(config.SetFromAssignment("  b  =  spaced value  "));
  ASSERT_OK(config.SetFromAssignment("c=x=y"));  // The first '=' splits.
  ASSERT_OK(config.SetFromAssignment("d="));     // An empty value is a value.
  EXPECT_EQ(config.GetString("a", ""), "new");
  EXPECT_EQ(config.GetString("b", ""), "spaced value");
  EXPECT_EQ(config.GetString("c", ""), "x=y");
  EXPECT_TRUE(config.Has("d"));
  EXPECT_EQ(config.GetString("d", "fb"), "");
}

TEST(ConfigTest, SetFromAssignmentRejectsMissingKeyOrEquals) {
  Config config;
  for (const char* text : {"novalue", "=value", ""}) {
    EXPECT_THAT(config.SetFromAssignment(text), HasErrorKind(ErrorKind::kInvalidArgument)) << text;
  }
  EXPECT_TRUE(config.values().empty());
}

// Bug (core/config.cc SetFromAssignment): the key is checked for emptiness
// before trimming, so "  =value" sets an option named "".
TEST(ConfigTest, SetFromAssignmentRejectsBlankKey) {
  Config config;
  EXPECT_THAT(config.SetFromAssignment("  =value"), HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_FALSE(config.Has(""));
}

}  // namespace
}  // namespace keel
