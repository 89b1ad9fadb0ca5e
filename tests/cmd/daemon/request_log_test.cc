// The daemon's request log: one logfmt line per request at debug, and a
// server error once, at warn (rfcs/0004-http-api.md §10).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "keel/core/logger.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

using ::testing::ElementsAre;

// The request lines of `log` at `level`, without their duration field.
std::vector<std::string> RequestLines(const CapturingLogger& log, LogLevel level) {
  std::vector<std::string> lines;
  for (const CapturingLogger::Line& line : log.lines()) {
    if (line.level != level || !absl::StartsWith(line.message, "request ")) continue;
    lines.push_back(line.message.substr(0, line.message.find(" duration=")));
  }
  return lines;
}

TEST(RequestLogTest, OneLogfmtLinePerRequestAndServerErrorsOnceAtWarn) {
  auto log = std::make_shared<CapturingLogger>();
  DaemonOptions options;
  options.driver = "memory";
  options.logger = log;
  InProcessDaemon daemon(options);
  ASSERT_OK(daemon.Start());
  std::unique_ptr<client::HttpClient> http = daemon.NewClient();
  ASSERT_OK(Publish(*http, "orders", "t", "1").status());
  ASSERT_OK_AND_ASSIGN(auto missing, http->Get("/v1/nothing?x=1"));
  ASSERT_EQ(missing.status, 404);
  ASSERT_OK(GetJson(*http, "/v1/streams/orders").status());
  daemon.api().SetDraining();
  daemon.server().StopAccepting();  // The kept-alive connection is served a 503.
  ASSERT_OK_AND_ASSIGN(auto draining, http->Get("/v1/streams/orders"));
  ASSERT_EQ(draining.status, 503);

  EXPECT_THAT(RequestLines(*log, LogLevel::kDebug),
              ElementsAre("request method=POST target=/v1/streams/orders/events status=201",
                          "request method=GET target=/v1/nothing?x=1 status=404",
                          "request method=GET target=/v1/streams/orders status=200"));
  EXPECT_THAT(RequestLines(*log, LogLevel::kWarn),
              ElementsAre("request method=GET target=/v1/streams/orders status=503"));
  for (const CapturingLogger::Line& line : log->lines()) {
    if (!absl::StartsWith(line.message, "request ")) continue;
    EXPECT_THAT(line.message, ::testing::MatchesRegex(".* duration=[0-9.]+(ns|us|ms|s)"));
  }
}

}  // namespace
}  // namespace keel::daemon_test
