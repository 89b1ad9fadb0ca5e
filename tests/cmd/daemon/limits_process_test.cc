// Connection and publish limits of the real `keel daemon` binary
// (`--max-sse-per-token`, `--max-sse-connections`,
// `--publish-rate-per-token`): what a client over them is told, and that a
// closed stream gives its place back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/client/errors.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

using ::testing::HasSubstr;

client::SseOptions Follow(const std::string& stream) {
  client::SseOptions options;
  options.stream = stream;
  options.after = "earliest";
  return options;
}

// The HTTP status and Retry-After of a refused SSE open.
std::pair<int, absl::Duration> Refusal(const absl::Status& status) {
  std::optional<client::HttpError> http = client::GetHttpError(status);
  if (!http.has_value()) return {0, absl::ZeroDuration()};
  return {http->status, http->retry_after};
}

// Without credentials each client address is one token: a second stream
// is refused with 429 and Retry-After until the first one closes.
TEST(LimitsProcessTest, SseStreamsPerTokenAreCappedAndFreedOnClose) {
  testing::TempDir dir;
  DaemonProcess daemon(dir.Sub("data"), dir.path().string());
  ASSERT_OK(daemon.Start(0, {"--max-sse-per-token", "1"}));
  ASSERT_OK_AND_ASSIGN(auto first,
                       client::SseReader::Open("127.0.0.1", daemon.port(), Follow("a")));
  absl::StatusOr<std::unique_ptr<client::SseReader>> second =
      client::SseReader::Open("127.0.0.1", daemon.port(), Follow("b"));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(Refusal(second.status()), std::make_pair(429, absl::Seconds(2)));
  EXPECT_THAT(second.status().message(), HasSubstr("too_many_connections"));
  // Requests other than streams are not counted.
  client::HttpClient http("127.0.0.1", daemon.port());
  ASSERT_OK(Publish(http, "a", "t", "1").status());
  ASSERT_OK_AND_ASSIGN(auto delivered, ReadEvents(*first, 1));
  EXPECT_EQ(delivered.size(), 1u);

  first->Close();  // The daemon sees it at its next write (a keepalive at the latest).
  absl::StatusOr<std::unique_ptr<client::SseReader>> again;
  const absl::Time deadline = absl::Now() + kWait;
  do {
    absl::SleepFor(absl::Milliseconds(50));
    again = client::SseReader::Open("127.0.0.1", daemon.port(), Follow("b"));
  } while (!again.ok() && absl::Now() < deadline);
  ASSERT_OK(again.status());
}

// The daemon's total is answered with 503, so a reader backs off whoever it is.
TEST(LimitsProcessTest, TheDaemonsTotalIsA503) {
  testing::TempDir dir;
  DaemonProcess daemon(dir.Sub("data"), dir.path().string());
  ASSERT_OK(daemon.Start(0, {"--max-sse-connections", "1"}));
  ASSERT_OK_AND_ASSIGN(auto first,
                       client::SseReader::Open("127.0.0.1", daemon.port(), Follow("a")));
  absl::StatusOr<std::unique_ptr<client::SseReader>> second =
      client::SseReader::Open("127.0.0.1", daemon.port(), Follow("a"));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(Refusal(second.status()), std::make_pair(503, absl::Seconds(2)));
}

// Publishes over the token's rate get 429 with Retry-After and store
// nothing; reads go on.
TEST(LimitsProcessTest, PublishesOverTheTokensRateAreRefusedAndStoreNothing) {
  testing::TempDir dir;
  DaemonProcess daemon(dir.Sub("data"), dir.path().string());
  ASSERT_OK(
      daemon.Start(0, {"--publish-rate-per-token", "0.01", "--publish-burst-per-token", "3"}));
  client::HttpClient http("127.0.0.1", daemon.port());
  for (int i = 1; i <= 3; ++i) ASSERT_OK(Publish(http, "p", "t", absl::StrCat(i)).status());
  ASSERT_OK_AND_ASSIGN(client::ClientResponse refused,
                       PostEvents(http, "p", R"({"type":"t","data":4})"));
  EXPECT_EQ(refused.status, 429);
  EXPECT_EQ(ErrorCode(refused), "rate_limited");
  EXPECT_EQ(refused.Header("retry-after"), "100");
  ASSERT_OK_AND_ASSIGN(std::vector<json::object> stored, ReplayAll(http, "p"));
  EXPECT_EQ(stored.size(), 3u);
}

}  // namespace
}  // namespace keel::daemon_test
