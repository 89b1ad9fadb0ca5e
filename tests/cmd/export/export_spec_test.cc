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
  EXPECT_EQ(spec.target, "/var/lake");
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

TEST(ExportSpecTest, CompressionAndAnObjectStoreTarget) {
  ASSERT_OK_AND_ASSIGN(ExportSpec zstd, ParseExportSpec("orders /lake compression=zstd"));
  EXPECT_EQ(zstd.compression, ExportCompression::kZstd);
  EXPECT_FALSE(zstd.object_store());
  ASSERT_OK_AND_ASSIGN(ExportSpec s3, ParseExportSpec("orders s3://lake/keel/events/ "
                                                      "endpoint=http://127.0.0.1:9000 name=n"));
  EXPECT_TRUE(s3.object_store());
  EXPECT_EQ(s3.target, "s3://lake/keel/events");
  EXPECT_EQ(s3.store_options.GetString("bucket", ""), "lake");
  EXPECT_EQ(s3.store_options.GetString("prefix", ""), "keel/events");
  EXPECT_EQ(s3.store_options.GetString("endpoint", ""), "http://127.0.0.1:9000");
  EXPECT_FALSE(s3.store_options.Has("name"));
  ASSERT_OK_AND_ASSIGN(ExportSpec other, ParseExportSpec("orders s3://lake/other"));
  EXPECT_THAT(other.name, MatchesRegex("other-[0-9a-f]{8}"));
  // The same bucket and prefix on another store is another target.
  ASSERT_OK_AND_ASSIGN(ExportSpec elsewhere,
                       ParseExportSpec("orders s3://lake/other endpoint=http://10.0.0.9:9000"));
  EXPECT_NE(elsewhere.name, other.name);
}

TEST(ExportSpecTest, BadSpecsSayWhatIsWrong) {
  EXPECT_THAT(ParseExportSpec("orders /lake compression=lz4").status().message(),
              HasSubstr("none or zstd"));
  EXPECT_THAT(ParseExportSpec("orders /lake endpoint=http://x").status().message(),
              HasSubstr("only name and compression"));
  EXPECT_THAT(ParseExportSpec("orders s3:///x").status().message(), HasSubstr("s3://BUCKET"));
  EXPECT_THAT(ParseExportSpec("orders s3://b/p bucket=c").status().message(),
              HasSubstr("the target's"));
  EXPECT_THAT(ParseExportSpec("orders s3://b/p colour=blue").status().message(),
              HasSubstr("colour"));
  EXPECT_THAT(ParseExportSpec("orders s3://b/p retries=many"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseExportSpec("orders").status().message(), HasSubstr("'PATTERN DIR'"));
  EXPECT_THAT(ParseExportSpec("orders /lake extra").status().message(), HasSubstr("'PATTERN DIR'"));
  EXPECT_THAT(ParseExportSpec("orders /lake name=a/b").status().message(),
              HasSubstr("may hold only"));
  EXPECT_THAT(ParseExportSpec("bad/pattern /lake"), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace keel::lakehouse
