// `keel group` and `keel dead-letters` through keel::cli::Main against an
// in-process daemon.
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "keel/cmd/keel/cli.h"
#include "keel/cmd/keel/command.h"
#include "keel/core/group_processor.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/cmd/run_keel.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

using ::testing::HasSubstr;

struct Result : ::keel::testing::KeelRun {
  // stdout as JSON objects, one a line.
  std::vector<json::object> Lines() const {
    std::vector<json::object> objects;
    for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipEmpty())) {
      boost::system::error_code ec;
      json::value value = json::parse(std::string(line), ec);
      EXPECT_FALSE(ec) << "not a JSON line: " << line;
      if (!ec && value.is_object()) objects.push_back(value.as_object());
    }
    return objects;
  }
};

Result RunKeel(std::vector<std::string> args) {
  return Result{::keel::testing::RunKeel(std::move(args))};
}

class GroupCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(daemon_.Start());
    http_ = daemon_.NewClient();
    for (int i = 0; i < 3; ++i) ASSERT_OK(Publish(*http_, "orders", "t", absl::StrCat(i)).status());
  }

  Result Group(std::vector<std::string> args) {
    args.insert(args.begin(), "group");
    const std::vector<std::string> common = {"--server", daemon_.address(), "--stream", "orders"};
    args.insert(args.end(), common.begin(), common.end());
    return RunKeel(std::move(args));
  }

  InProcessDaemon daemon_;
  std::unique_ptr<client::HttpClient> http_;
};

TEST_F(GroupCliTest, ConsumeCommitShowListAndSeek) {
  Result consumed = Group({"consume", "--group", "billing", "--limit", "2", "--lease-ms", "60000"});
  ASSERT_EQ(consumed.code, cli::kExitOk) << consumed.err;
  ASSERT_EQ(consumed.Lines().size(), 1u);
  json::object page = consumed.Lines()[0];
  ASSERT_EQ(page.at("events").as_array().size(), 2u);
  const std::string cursor(page.at("lease").at("to").as_string());
  const std::string token = absl::StrCat(page.at("lease").at("token").to_number<uint64_t>());

  Result committed = Group({"commit", "--group", "billing", "--cursor", cursor, "--lease-token", token});
  ASSERT_EQ(committed.code, cli::kExitOk) << committed.err;
  EXPECT_EQ(committed.Lines()[0].at("committedSequence").to_number<uint64_t>(), 2u);

  Result shown = Group({"show", "--group", "billing"});
  ASSERT_EQ(shown.code, cli::kExitOk) << shown.err;
  EXPECT_EQ(shown.Lines()[0].at("lag").to_number<uint64_t>(), 1u);

  // A newer lease supersedes the token: committing with it is refused.
  Result next = Group({"consume", "--group", "billing", "--limit", "1", "--lease-ms", "60000"});
  ASSERT_EQ(next.code, cli::kExitOk) << next.err;
  Result stale = Group({"commit", "--group", "billing", "--cursor", cursor, "--lease-token", token});
  EXPECT_EQ(stale.code, cli::kExitFailure);
  EXPECT_THAT(stale.err, HasSubstr("conflict"));
  EXPECT_THAT(stale.err, HasSubstr("superseded"));

  Result sought = Group({"seek", "--group", "audit", "--to", "latest"});
  ASSERT_EQ(sought.code, cli::kExitOk) << sought.err;
  EXPECT_EQ(sought.Lines()[0].at("committedSequence").to_number<uint64_t>(), 3u);
  Result listed = Group({"list"});
  ASSERT_EQ(listed.code, cli::kExitOk) << listed.err;
  ASSERT_EQ(listed.Lines().size(), 2u);
  EXPECT_EQ(listed.Lines()[0].at("group").as_string(), "audit");
  EXPECT_EQ(listed.Lines()[1].at("group").as_string(), "billing");
}

TEST_F(GroupCliTest, ConsumeStartingAtLatestSkipsWhatCameBefore) {
  Result first = Group({"consume", "--group", "late", "--start", "latest", "--lease-ms", "60000"});
  ASSERT_EQ(first.code, cli::kExitOk) << first.err;
  EXPECT_TRUE(first.Lines()[0].at("events").as_array().empty());
  ASSERT_OK(Publish(*http_, "orders", "t", "3").status());
  Result next = Group({"consume", "--group", "late", "--lease-ms", "60000"});
  ASSERT_EQ(next.code, cli::kExitOk) << next.err;
  const json::array events = next.Lines()[0].at("events").as_array();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].at("sequence").to_number<uint64_t>(), 4u);
}

TEST_F(GroupCliTest, SeekToATimeResumesAtTheFirstEventFromThatTime) {
  // Events 1-3 were published before this time, 4 and 5 after it.
  const std::string time = absl::FormatTime(absl::RFC3339_full, absl::Now(), absl::UTCTimeZone());
  for (int i = 0; i < 2; ++i) ASSERT_OK(Publish(*http_, "orders", "t", absl::StrCat(3 + i)).status());
  Result sought = Group({"seek", "--group", "replay", "--time", time});
  ASSERT_EQ(sought.code, cli::kExitOk) << sought.err;
  EXPECT_EQ(sought.Lines()[0].at("committedSequence").to_number<uint64_t>(), 3u);
  Result consumed = Group({"consume", "--group", "replay", "--lease-ms", "60000"});
  ASSERT_EQ(consumed.code, cli::kExitOk) << consumed.err;
  const json::array events = consumed.Lines()[0].at("events").as_array();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].at("sequence").to_number<uint64_t>(), 4u);
  EXPECT_EQ(Group({"seek", "--group", "replay", "--time", "yesterday"}).code,
            cli::kExitFailure);
}

TEST_F(GroupCliTest, UsageErrors) {
  EXPECT_EQ(Group({"explode", "--group", "g"}).code, cli::kExitUsage);
  EXPECT_EQ(Group({"show"}).code, cli::kExitUsage);
  EXPECT_EQ(Group({"commit", "--group", "g"}).code, cli::kExitUsage);
  EXPECT_EQ(Group({"seek", "--group", "g"}).code, cli::kExitUsage);
}

TEST_F(GroupCliTest, DeadLettersListShowAndRepublish) {
  ProcessOptions options;
  options.max_attempts = 1;
  ASSERT_OK(ProcessOnce(daemon_.bus(), "orders", "g",
                        [](const Event& event) {
                          return event.sequence == 2 ? absl::InternalError("bad order")
                                                     : absl::OkStatus();
                        },
                        options)
                .status());
  const std::vector<std::string> common = {"--server", daemon_.address(), "--stream", "orders"};
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "dead-letters");
    args.insert(args.end(), common.begin(), common.end());
    return RunKeel(args);
  };
  Result listed = run({"list"});
  ASSERT_EQ(listed.code, cli::kExitOk) << listed.err;
  ASSERT_EQ(listed.Lines().size(), 1u);
  EXPECT_EQ(listed.Lines()[0].at("reason").as_string(), "bad order");
  EXPECT_EQ(listed.Lines()[0].at("sourceSequence").to_number<uint64_t>(), 2u);
  Result shown = run({"show", "--sequence", "1"});
  ASSERT_EQ(shown.code, cli::kExitOk) << shown.err;
  EXPECT_EQ(shown.Lines()[0].at("attempts").to_number<int>(), 1);
  Result republished = run({"republish", "--sequence", "1"});
  ASSERT_EQ(republished.code, cli::kExitOk) << republished.err;
  EXPECT_EQ(republished.Lines()[0].at("sequence").to_number<uint64_t>(), 4u);
  EXPECT_EQ(run({"show", "--sequence", "5"}).code, cli::kExitFailure);
  EXPECT_EQ(run({"show"}).code, cli::kExitUsage);
}

}  // namespace
}  // namespace keel::daemon_test
