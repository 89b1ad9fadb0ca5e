// Tokens and rate limits over real sockets: the 401, 403 and 429 rows of the
// error table (rfcs/0004-http-api.md; the other rows are in errors_test.cc),
// what each token opens, the CLI's --auth-token, and a request log that never
// shows a token.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "keel/cmd/keel/client/errors.h"
#include "keel/cmd/keel/command.h"
#include "keel/cmd/keel/server/authenticator.h"
#include "keel/core/logger.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/cmd/daemon/raw_connection.h"
#include "keel/tests/cmd/run_keel.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

using ::keel::testing::RunKeel;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kReadToken[] = "dashboard-read-token-0001";
constexpr char kWriteToken[] = "ingest-write-token-0002";

client::Headers WithToken(absl::string_view token, client::Headers headers = {}) {
  headers.emplace_back("Authorization", absl::StrCat("Bearer ", token));
  return headers;
}

client::Headers Json(client::Headers headers = {}) {
  headers.emplace_back("Content-Type", "application/json");
  return headers;
}


class AccessTest : public ::testing::Test {
 protected:
  static DaemonOptions Options(std::shared_ptr<Logger> logger) {
    DaemonOptions options;
    absl::StatusOr<std::unique_ptr<server::Authenticator>> tokens =
        server::Authenticator::FromTokens(
            absl::StrCat("read ", kReadToken, "\nwrite ", kWriteToken, "\n"));
    EXPECT_OK(tokens);
    if (tokens.ok()) options.server.authenticator = *std::move(tokens);
    options.logger = std::move(logger);
    return options;
  }

  void SetUp() override {
    ASSERT_OK(daemon_.Start());
    writer_ = std::make_unique<client::HttpClient>("127.0.0.1", daemon_.port(),
                                                   client::ClientOptions{.token = kWriteToken});
    ASSERT_OK(Publish(*writer_, "orders", "t", "1").status());
  }

  std::shared_ptr<CapturingLogger> log_ = std::make_shared<CapturingLogger>();
  InProcessDaemon daemon_{Options(log_)};
  std::unique_ptr<client::HttpClient> writer_;
};

TEST_F(AccessTest, TableOfRefusedRequests) {
  const std::string events = "/v1/streams/orders/events";
  const std::string event = R"({"type":"t","data":2})";
  const std::string kBare = "Bearer realm=\"keel\"";  // The challenge without an error code.
  const struct {
    std::string name;
    std::string method;
    std::string target;
    client::Headers headers;
    int status;
    std::string code;
    std::string challenge;
  } table[] = {
      // clang-format off
      {"publish without a token", "POST", events, Json(), 401, "unauthenticated", kBare},
      {"replay without a token", "GET", events, {}, 401, "unauthenticated", kBare},
      {"unknown token", "GET", events, WithToken("guessed-token-000000000"), 401,
       "unauthenticated", absl::StrCat(kBare, ", error=\"invalid_token\"")},
      {"basic credentials", "GET", events, {{"Authorization", "Basic dXNlcjpwYXNz"}}, 401,
       "unauthenticated", kBare},
      {"token in the query of a publish", "POST", events + "?access_token=" + kWriteToken, Json(),
       401, "unauthenticated", kBare},
      {"token in the query of a replay", "GET", events + "?access_token=" + kReadToken, {}, 401,
       "unauthenticated", kBare},
      {"metrics without a token", "GET", "/metrics", {}, 401, "unauthenticated", kBare},
      {"publish with a read token", "POST", events, Json(WithToken(kReadToken)), 403,
       "permission_denied",
       absl::StrCat(kBare, ", error=\"insufficient_scope\", scope=\"publish:orders\"")},
      {"declare with a read token", "PUT", "/v1/streams/orders", Json(WithToken(kReadToken)), 403,
       "permission_denied",
       absl::StrCat(kBare, ", error=\"insufficient_scope\", scope=\"admin:orders\"")},
      // clang-format on
  };
  client::HttpClient reader("127.0.0.1", daemon_.port(),
                            client::ClientOptions{.token = kReadToken});
  ASSERT_OK_AND_ASSIGN(auto metrics_before, reader.Get("/metrics"));
  const StoreSnapshot before = SnapshotOf(daemon_.bus());
  for (const auto& bad : table) {
    SCOPED_TRACE(bad.name);
    client::HttpClient http("127.0.0.1", daemon_.port());
    ASSERT_OK_AND_ASSIGN(client::ClientResponse response,
                         http.Request(bad.method, bad.target, event, bad.headers));
    EXPECT_EQ(response.status, bad.status) << response.body;
    EXPECT_EQ(ErrorCode(response), bad.code) << response.body;
    EXPECT_EQ(response.Header("www-authenticate"), bad.challenge);
    EXPECT_THAT(std::string(client::ErrorFromResponse(response).message()),
                ::testing::StartsWith(bad.code + ": "));
    EXPECT_EQ(SnapshotOf(daemon_.bus()), before) << "a refused request changed the store";
    // A refusal keeps the connection: the request was read whole.
    ASSERT_OK_AND_ASSIGN(auto health, http.Get("/healthz"));
    EXPECT_EQ(health.status, 200);
    EXPECT_EQ(http.connections_opened(), 1);
  }
  ASSERT_OK_AND_ASSIGN(auto metrics, reader.Get("/metrics"));
  EXPECT_THAT(metrics.body, HasSubstr("keel_errors_total{code=\"unauthenticated\"} 7\n"));
  EXPECT_THAT(metrics.body, HasSubstr("keel_errors_total{code=\"permission_denied\"} 2\n"));
  // Refusals are not requests handled (RFC 0004 §11): between the two
  // scrapes only the health checks and the second scrape count.
  EXPECT_EQ(MetricValue(metrics.body, "keel_http_requests_total") -
                MetricValue(metrics_before.body, "keel_http_requests_total"),
            std::size(table) + 1);
}

TEST_F(AccessTest, EachTokenOpensWhatItsAccessAllows) {
  ASSERT_OK_AND_ASSIGN(PublishedEvent second, Publish(*writer_, "orders", "t", "2"));
  EXPECT_EQ(second.sequence, 2u);

  client::HttpClient reader("127.0.0.1", daemon_.port(),
                            client::ClientOptions{.token = kReadToken});
  ASSERT_OK_AND_ASSIGN(json::value page,
                       GetJson(reader, "/v1/streams/orders/events?after=earliest"));
  EXPECT_EQ(page.at("events").as_array().size(), 2u);
  ASSERT_OK_AND_ASSIGN(json::value bounds, GetJson(reader, "/v1/streams/orders"));
  EXPECT_EQ(bounds.at("lastSequence").to_number<uint64_t>(), 2u);

  // SSE with the token in a header, and in the query as a browser's
  // EventSource sends it.
  client::SseOptions by_header;
  by_header.stream = "orders";
  by_header.after = "earliest";
  by_header.token = kReadToken;
  ASSERT_OK_AND_ASSIGN(auto sse, daemon_.OpenSse(by_header));
  ASSERT_OK_AND_ASSIGN(auto frames, ReadEvents(*sse, 2));
  EXPECT_THAT(SequencesOf(frames), ::testing::ElementsAre(1, 2));
  RawConnection browser(daemon_.port());
  ASSERT_TRUE(browser.connected());
  browser.Send(absl::StrCat("GET /v1/streams/orders/sse?after=earliest&access_token=", kReadToken,
                            " HTTP/1.1\r\nHost: keel\r\nAccept: text/event-stream\r\n\r\n"));
  std::string streamed;
  for (int i = 0; i < 20 && !absl::StrContains(streamed, "\nid: "); ++i) streamed += browser.Read();
  EXPECT_THAT(streamed, ::testing::StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(streamed, HasSubstr("text/event-stream"));
  EXPECT_THAT(streamed, HasSubstr("\nid: "));
  client::SseOptions without = by_header;
  without.token = "";
  absl::StatusOr<std::unique_ptr<client::SseReader>> refused = daemon_.OpenSse(without);
  ASSERT_FALSE(refused.ok());
  ASSERT_TRUE(client::GetHttpError(refused.status()).has_value()) << refused.status();
  EXPECT_EQ(client::GetHttpError(refused.status())->status, 401);

  // Probes and CORS preflights need no token.
  client::HttpClient anonymous("127.0.0.1", daemon_.port());
  for (const char* probe : {"/healthz", "/readyz"}) {
    ASSERT_OK_AND_ASSIGN(auto response, anonymous.Get(probe));
    EXPECT_EQ(response.status, 200) << probe;
  }
  ASSERT_OK_AND_ASSIGN(auto preflight,
                       anonymous.Request("OPTIONS", "/v1/streams/orders/events", "",
                                         {{"Origin", "https://app.example"},
                                          {"Access-Control-Request-Method", "POST"}}));
  EXPECT_EQ(preflight.status, 204) << preflight.body;
}

// The query of an SSE request carries the token: the log leaves the query
// out (parameter names are decoded, so no spelling of it is safe to log).
TEST_F(AccessTest, TheRequestLogNeverShowsAToken) {
  for (const std::string& query : {absl::StrCat("access_token=", kReadToken),
                                   absl::StrCat("acc%65ss_token=", kReadToken),
                                   std::string("access_token=wrong-but-secret")}) {
    SCOPED_TRACE(query);
    RawConnection browser(daemon_.port());
    ASSERT_TRUE(browser.connected());
    browser.Send(absl::StrCat("GET /v1/streams/orders/sse?after=earliest&", query,
                              " HTTP/1.1\r\nHost: keel\r\n\r\n"));
    const bool valid = !absl::StrContains(query, "wrong");
    EXPECT_THAT(browser.Read(), ::testing::StartsWith(valid ? "HTTP/1.1 200" : "HTTP/1.1 401"));
  }
  EXPECT_TRUE(
      log_->Contains(LogLevel::kDebug, "method=GET target=/v1/streams/orders/sse status=200 "));
  EXPECT_TRUE(
      log_->Contains(LogLevel::kDebug, "method=GET target=/v1/streams/orders/sse status=401 "));
  for (const CapturingLogger::Line& line : log_->lines()) {
    EXPECT_THAT(line.message, Not(HasSubstr(kReadToken)));
    EXPECT_THAT(line.message, Not(HasSubstr("wrong-but-secret")));
  }
}

TEST_F(AccessTest, TheCliSendsItsToken) {
  const std::string server = daemon_.address();
  auto publish = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"publish", "--server", server,   "--stream", "orders",
                                     "--type",  "cli",      "--data", "{}"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunKeel(args);
  };
  auto ok = publish({"--auth-token", kWriteToken});
  EXPECT_EQ(ok.code, cli::kExitOk) << ok.err;
  auto anonymous = publish({});
  EXPECT_EQ(anonymous.code, cli::kExitFailure);
  EXPECT_THAT(anonymous.err, HasSubstr("unauthenticated"));
  auto read_only = publish({"--auth-token", kReadToken});
  EXPECT_EQ(read_only.code, cli::kExitFailure);
  EXPECT_THAT(read_only.err, HasSubstr("permission_denied"));

  auto replay =
      RunKeel({"replay", "--server", server, "--stream", "orders", "--auth-token", kReadToken});
  EXPECT_EQ(replay.code, cli::kExitOk) << replay.err;
  EXPECT_THAT(replay.out, HasSubstr("\"type\":\"cli\""));
  auto streams = RunKeel({"streams", "--server", server, "--auth-token", kReadToken});
  EXPECT_EQ(streams.code, cli::kExitOk) << streams.err;
  auto tail = RunKeel({"tail", "--server", server, "--stream", "orders", "--after", "earliest",
                       "--count", "2", "--auth-token", kReadToken});
  EXPECT_EQ(tail.code, cli::kExitOk) << tail.err;
  EXPECT_THAT(tail.out, HasSubstr("\"type\":\"cli\""));
  auto groups = RunKeel({"group", "list", "--server", server, "--stream", "orders"});
  EXPECT_EQ(groups.code, cli::kExitFailure);
  EXPECT_THAT(groups.err, HasSubstr("unauthenticated"));
  // Every other client command sends it too.
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"group", "list", "--stream", "orders", "--auth-token", kReadToken},
           {"dead-letters", "list", "--stream", "orders", "--auth-token", kWriteToken},
           {"declare", "--stream", "audited", "--policy", "max_events=10", "--auth-token",
            kWriteToken}}) {
    std::vector<std::string> full = args;
    full.insert(full.end(), {"--server", server});
    auto run = RunKeel(full);
    EXPECT_EQ(run.code, cli::kExitOk) << absl::StrJoin(args, " ") << ": " << run.err;
  }
}

class RateLimitTest : public ::testing::Test {
 protected:
  static DaemonOptions Options() {
    DaemonOptions options;
    options.driver = "memory";
    options.server.rate_limit = 0.001;  // One request per 1000 s after the burst.
    options.server.rate_burst = 3;
    return options;
  }
  InProcessDaemon daemon_{Options()};
};

TEST_F(RateLimitTest, AClientOverItsRateGets429WithRetryAfter) {
  ASSERT_OK(daemon_.Start());
  client::HttpClient http("127.0.0.1", daemon_.port());
  ASSERT_OK(Publish(http, "s", "t", "1").status());
  for (int i = 0; i < 2; ++i) ASSERT_OK(GetJson(http, "/v1/streams/s").status()) << i;

  ASSERT_OK_AND_ASSIGN(auto refused, PostEvents(http, "s", R"({"type":"t","data":2})"));
  EXPECT_EQ(refused.status, 429) << refused.body;
  EXPECT_EQ(ErrorCode(refused), "rate_limited");
  EXPECT_EQ(client::ErrorFromResponse(refused).code(), absl::StatusCode::kResourceExhausted);
  int retry_after = 0;
  ASSERT_TRUE(absl::SimpleAtoi(refused.Header("retry-after"), &retry_after))
      << refused.Header("retry-after");
  EXPECT_GT(retry_after, 900);
  EXPECT_LE(retry_after, 1000);
  EXPECT_EQ(SnapshotOf(daemon_.bus()), (StoreSnapshot{{"s", 1, 1, 1}}));

  // Probes are not limited; the limit holds on a new connection too.
  ASSERT_OK_AND_ASSIGN(auto health, http.Get("/healthz"));
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(http.connections_opened(), 1) << "a 429 closed the connection";
  client::HttpClient again("127.0.0.1", daemon_.port());
  ASSERT_OK_AND_ASSIGN(auto still, again.Get("/v1/streams"));
  EXPECT_EQ(still.status, 429);
  EXPECT_THAT(daemon_.metrics().Render(),
              HasSubstr("keel_errors_total{code=\"rate_limited\"} 2\n"));
}

// `keel tail` takes a 429 as a wait, not an end: it reconnects after the
// Retry-After and reads the stream.
TEST(RateLimitRetryTest, TailWaitsOutA429) {
  DaemonOptions options;
  options.driver = "memory";
  options.server.rate_limit = 0.5;  // A request every 2 s after the first.
  options.server.rate_burst = 1;
  InProcessDaemon daemon(options);
  ASSERT_OK(daemon.Start());
  client::HttpClient http("127.0.0.1", daemon.port());
  ASSERT_OK(Publish(http, "s", "t", "1").status());  // Takes the burst.
  auto tail = RunKeel({"tail", "--server", daemon.address(), "--stream", "s", "--after",
                       "earliest", "--count", "1"});
  EXPECT_EQ(tail.code, cli::kExitOk) << tail.err;
  EXPECT_THAT(tail.out, HasSubstr("\"sequence\":1"));
  EXPECT_THAT(tail.err, HasSubstr("rate_limited"));
  EXPECT_THAT(tail.err, HasSubstr("reconnecting in 2s"));
}

}  // namespace
}  // namespace keel::daemon_test
