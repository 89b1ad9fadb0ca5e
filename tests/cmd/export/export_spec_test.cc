// What `--export` and `keel export` accept, and the checkpoints' names.
#include "keel/cmd/keel/export/export_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "keel/tests/testing/status_matchers.h"

namespace keel::lakehouse {
namespace {

using ::keel::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

TEST(ExportSpecTest, APatternAndADirectory) {
  ASSERT_OK_AND_ASSIGN(ExportSpec spec, ParseExportSpec("orders.*  /var/lake/"));
  EXPECT_TRUE(spec.pattern.Matches("orders.eu"));
  EXPECT_FALSE(spec.pattern.Matches("payments"));
  EXPECT_EQ(spec.directory, "/var/lake");
  EXPECT_THAT(spec.name, MatchesRegex("lake-[0-9a-f]{8}"));
}

TEST(ExportSpecTest, TheDefaultNameFollowsTheDirectory) {
  ASSERT_OK_AND_ASSIGN(ExportSpec a, ParseExportSpec("* /srv/a/lake"));
  ASSERT_OK_AND_ASSIGN(ExportSpec again, ParseExportSpec("orders /srv/a/./lake"));
  ASSERT_OK_AND_ASSIGN(ExportSpec b, ParseExportSpec("* /srv/b/lake"));
  EXPECT_EQ(a.name, again.name);
  EXPECT_NE(a.name, b.name);
}

TEST(ExportSpecTest, AGivenName) {
  ASSERT_OK_AND_ASSIGN(ExportSpec spec, ParseExportSpec("orders /lake name=nightly"));
  EXPECT_EQ(spec.name, "nightly");
}

TEST(ExportSpecTest, BadSpecsSayWhatIsWrong) {
  EXPECT_THAT(ParseExportSpec("orders").status().message(), HasSubstr("'PATTERN DIR'"));
  EXPECT_THAT(ParseExportSpec("orders /lake extra").status().message(), HasSubstr("'PATTERN DIR'"));
  EXPECT_THAT(ParseExportSpec("orders /lake name=a/b").status().message(),
              HasSubstr("may hold only"));
  EXPECT_THAT(ParseExportSpec("bad/pattern /lake"), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace keel::lakehouse
