// The pieces of the request gate without sockets: the tokens file, the
// per-client token bucket, and what the gate answers for a request. (Scopes
// and JWTs on their own: grant_test.cc, jwt_test.cc.)
#include "keel/cmd/keel/server/request_gate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_split.h"
#include "keel/cmd/keel/server/access_tokens.h"
#include "keel/cmd/keel/server/api.h"
#include "keel/cmd/keel/server/client_key.h"
#include "keel/cmd/keel/server/rate_limiter.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

constexpr char kReadToken[] = "read-token-0123456789";
constexpr char kWriteToken[] = "write-token-0123456789";

// The grant of `token` in `tokens` as text; "none" when not found.
std::string GrantOf(const AccessTokens& tokens, absl::string_view token) {
  std::shared_ptr<const Grant> grant = tokens.Find(token);
  return grant == nullptr ? "none" : grant->ToString();
}

TEST(AccessTokensTest, ReadsTheFirstVersionsReadAndWriteLinesSkippingCommentsAndBlankLines) {
  ASSERT_OK_AND_ASSIGN(AccessTokens tokens,
                       AccessTokens::Parse(absl::StrCat("# dashboards\n\n  read ", kReadToken,
                                                        "  \nwrite\t", kWriteToken, "\n")));
  EXPECT_EQ(tokens.size(), 2u);
  EXPECT_EQ(GrantOf(tokens, kReadToken), "read");
  EXPECT_EQ(GrantOf(tokens, kWriteToken), "publish read admin");
  EXPECT_EQ(GrantOf(tokens, "read-token-012345678"), "none");    // A prefix.
  EXPECT_EQ(GrantOf(tokens, "read-token-01234567890"), "none");  // Longer.
  EXPECT_EQ(GrantOf(tokens, ""), "none");
  // Both lines hold a token in clear text: the daemon warns of them.
  EXPECT_THAT(tokens.legacy_lines(), ::testing::ElementsAre(3, 4));
}

TEST(AccessTokensTest, ReadsHashedLinesWithScopesAndTenantAsKeelTokenHashPrintsThem) {
  ASSERT_OK_AND_ASSIGN(Grant acme, Grant::Parse(std::vector<std::string>{
                                       "publish:orders.", "read:orders.", "tenant=acme"}));
  const std::string line = TokenHashLine(kReadToken, acme);
  // The SHA-256 of the token, never the token: `echo -n read-token-0123456789 | sha256sum`.
  EXPECT_EQ(line, "sha256:" +
                      absl::BytesToHexString(std::string(
                          reinterpret_cast<const char*>(DigestOf(kReadToken).data()), 32)) +
                      " publish:orders. read:orders. tenant=acme");
  EXPECT_THAT(line, ::testing::Not(HasSubstr(kReadToken)));
  ASSERT_OK_AND_ASSIGN(AccessTokens tokens, AccessTokens::Parse(absl::StrCat(line, "\n")));
  EXPECT_EQ(GrantOf(tokens, kReadToken), "publish:orders. read:orders. tenant=acme");
  EXPECT_EQ(GrantOf(tokens, kWriteToken), "none");
  EXPECT_TRUE(tokens.legacy_lines().empty());
}

TEST(AccessTokensTest, HashesAreSha256) {
  // A known vector (FIPS 180-2): SHA-256("abc").
  const TokenDigest digest = DigestOf("abc");
  EXPECT_EQ(absl::BytesToHexString(std::string(reinterpret_cast<const char*>(digest.data()), 32)),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(AccessTokensTest, RefusesABadLineNamingIt) {
  const struct {
    std::string text;
    std::string message;
  } cases[] = {
      {"admin some-long-token-value", "line 1: want 'sha256:<64 lower-case hex digits>"},
      {"# only a comment\nwrite", "line 2: want 'sha256:"},
      {"read a b", "line 1: want 'sha256:"},
      {"sha256:abc read", "line 1: want 'sha256:<64"},
      {"sha256:" + std::string(64, 'A') + " read", "line 1: want 'sha256:<64 lower-case"},
      {"sha256:" + std::string(64, 'a'), "line 1: no scope"},
      {"sha256:" + std::string(64, 'a') + " write", "line 1: 'write' is not a scope"},
      {"sha256:" + std::string(64, 'a') + " read:bad/prefix", "line 1: 'read:bad/prefix'"},
      {"sha256:" + std::string(64, 'a') + " admin tenant=acme", "line 1: admin acts on whole"},
      {"sha256:" + std::string(64, 'a') + " read\nsha256:" + std::string(64, 'a') + " publish",
       "line 2: the token is listed twice"},
      {"read short", "line 1: a token is at least 16 printable characters"},
      {"read token-with-\x01-control", "line 1: a token is at least 16"},
      {absl::StrCat("read ", kReadToken, "\nwrite ", kReadToken),
       "line 2: the token is listed twice"},
      {"# no tokens\n", "the file lists no token"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    absl::StatusOr<AccessTokens> tokens = AccessTokens::Parse(c.text);
    ASSERT_FALSE(tokens.ok());
    EXPECT_EQ(tokens.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(tokens.status().message()), HasSubstr(c.message));
  }
  EXPECT_EQ(AccessTokens::Load("/nonexistent/tokens").status().code(), absl::StatusCode::kNotFound);
}

const RateLimiter::Clock::time_point kStart =
    RateLimiter::Clock::time_point() + std::chrono::hours(1000);

// `d` after kStart.
RateLimiter::Clock::time_point At(absl::Duration d) {
  return kStart + absl::ToChronoNanoseconds(d);
}

TEST(RateLimiterTest, AdmitsTheBurstThenTellsHowLongUntilTheNext) {
  RateLimiter limiter(/*per_second=*/2, /*burst=*/3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(limiter.Admit("10.0.0.1", kStart), std::nullopt) << i;
  EXPECT_THAT(limiter.Admit("10.0.0.1", kStart), Optional(absl::Milliseconds(500)));
  // Times and rates are binary fractions here, so the arithmetic is exact.
  EXPECT_THAT(limiter.Admit("10.0.0.1", At(absl::Milliseconds(250))),
              Optional(absl::Milliseconds(250)));
  EXPECT_EQ(limiter.Admit("10.0.0.1", At(absl::Milliseconds(500))), std::nullopt);
  EXPECT_TRUE(limiter.Admit("10.0.0.1", At(absl::Milliseconds(500))).has_value());
  // Refused requests took nothing: a second later two more pass, not more.
  const RateLimiter::Clock::time_point later = At(absl::Milliseconds(1500));
  EXPECT_EQ(limiter.Admit("10.0.0.1", later), std::nullopt);
  EXPECT_EQ(limiter.Admit("10.0.0.1", later), std::nullopt);
  EXPECT_TRUE(limiter.Admit("10.0.0.1", later).has_value());
  // A long pause gives back the burst, no more.
  const RateLimiter::Clock::time_point idle = later + std::chrono::hours(1);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(limiter.Admit("10.0.0.1", idle), std::nullopt) << i;
  EXPECT_TRUE(limiter.Admit("10.0.0.1", idle).has_value());
}

TEST(RateLimiterTest, EachClientHasItsOwnBucket) {
  RateLimiter limiter(1, 1);
  EXPECT_EQ(limiter.Admit("a", kStart), std::nullopt);
  EXPECT_TRUE(limiter.Admit("a", kStart).has_value());
  EXPECT_EQ(limiter.Admit("b", kStart), std::nullopt);
  EXPECT_EQ(limiter.clients(), 2u);
}

TEST(RateLimiterTest, KeepsAtMostMaxClientsDroppingIdleOnesFirst) {
  RateLimiter limiter(1, 2, /*max_clients=*/2);
  ASSERT_EQ(limiter.Admit("a", kStart), std::nullopt);
  ASSERT_EQ(limiter.Admit("b", At(absl::Seconds(1))), std::nullopt);
  // At +1.5 s `a` has its burst back, `b` not yet: `a` goes.
  ASSERT_EQ(limiter.Admit("c", At(absl::Milliseconds(1500))), std::nullopt);
  EXPECT_EQ(limiter.clients(), 2u);
  ASSERT_EQ(limiter.Admit("b", At(absl::Milliseconds(1500))), std::nullopt);
  // `b` kept its bucket: half a token was left, so its next request waits.
  EXPECT_TRUE(limiter.Admit("b", At(absl::Milliseconds(1500))).has_value());
  // Nobody idle: one goes anyway, so memory stays bounded.
  ASSERT_EQ(limiter.Admit("d", At(absl::Milliseconds(1500))), std::nullopt);
  EXPECT_EQ(limiter.clients(), 2u);
}

HttpRequest Request(std::string method, std::string path,
                    std::vector<std::pair<std::string, std::string>> headers = {},
                    std::map<std::string, std::string, std::less<>> query = {}) {
  HttpRequest request;
  request.method = std::move(method);
  request.path = std::move(path);
  for (absl::string_view segment : absl::StrSplit(absl::string_view(request.path).substr(1), '/')) {
    request.segments.emplace_back(segment);
  }
  for (const auto& [name, value] : headers) request.headers.Add(name, value);
  request.query = std::move(query);
  return request;
}

// What `gate` answers `request` of `client` at kStart, the request resolved
// as the session resolves it.
std::optional<RequestGate::Refusal> Check(RequestGate& gate, HttpRequest request,
                                          absl::string_view client) {
  return gate.Check(request, Api::Resolve(request), client, kStart);
}

std::shared_ptr<const Authenticator> TokensOf(absl::string_view text) {
  absl::StatusOr<std::unique_ptr<Authenticator>> tokens = Authenticator::FromTokens(text);
  EXPECT_OK(tokens);
  return tokens.ok() ? std::shared_ptr<const Authenticator>(*std::move(tokens)) : nullptr;
}

RequestGate TokenGate() {
  return RequestGate(TokensOf(absl::StrCat("read ", kReadToken, "\nwrite ", kWriteToken)), 0, 0);
}

std::string Bearer(absl::string_view token) { return absl::StrCat("Bearer ", token); }

TEST(RequestGateTest, TokensDecideWhoIsServed) {
  RequestGate gate = TokenGate();
  const std::string events = "/v1/streams/s/events";
  const struct {
    std::string name;
    HttpRequest request;
    int status;  // 0: served.
    std::string challenge;
  } cases[] = {
      {"no token", Request("GET", events), 401, "Bearer realm=\"keel\""},
      {"unknown token", Request("GET", events, {{"Authorization", Bearer("x-0123456789abcdef")}}),
       401, "Bearer realm=\"keel\", error=\"invalid_token\""},
      {"another scheme", Request("GET", events, {{"Authorization", "Basic dXNlcjpwYXNz"}}), 401,
       "Bearer realm=\"keel\""},
      {"empty bearer token", Request("GET", events, {{"Authorization", "Bearer  "}}), 401,
       "Bearer realm=\"keel\""},
      {"query token on a replay", Request("GET", events, {}, {{"access_token", kReadToken}}), 401,
       "Bearer realm=\"keel\""},
      {"read token writes", Request("POST", events, {{"Authorization", Bearer(kReadToken)}}), 403,
       "Bearer realm=\"keel\", error=\"insufficient_scope\", scope=\"publish:s\""},
      {"query token on a POST", Request("POST", events, {}, {{"access_token", kWriteToken}}), 401,
       "Bearer realm=\"keel\""},
      {"read token reads", Request("GET", events, {{"Authorization", Bearer(kReadToken)}}), 0, ""},
      {"scheme in any case",
       Request("GET", events, {{"Authorization", "bearer " + std::string(kReadToken)}}), 0, ""},
      {"write token writes", Request("POST", events, {{"Authorization", Bearer(kWriteToken)}}), 0,
       ""},
      {"query token on a GET",
       Request("GET", "/v1/streams/s/sse", {}, {{"access_token", kReadToken}}), 0, ""},
      {"health probe", Request("GET", "/healthz"), 0, ""},
      {"readiness probe", Request("GET", "/readyz"), 0, ""},
      {"CORS preflight", Request("OPTIONS", events), 0, ""},
      {"metrics", Request("GET", "/metrics"), 401, "Bearer realm=\"keel\""},
      // Each route's declared scope: a read token reads and consumes
      // through groups; seeking one, and dead letters, are admin's.
      {"read token describes a group",
       Request("GET", "/v1/streams/s/groups/g", {{"Authorization", Bearer(kReadToken)}}), 0, ""},
      {"read token consumes",
       Request("POST", "/v1/streams/s/groups/g:consume", {{"Authorization", Bearer(kReadToken)}}),
       0, ""},
      {"read token lists dead letters",
       Request("GET", "/v1/streams/s/dead-letters", {{"Authorization", Bearer(kReadToken)}}), 403,
       "Bearer realm=\"keel\", error=\"insufficient_scope\", scope=\"admin:s\""},
      {"read token seeks",
       Request("POST", "/v1/streams/s/groups/g:seek", {{"Authorization", Bearer(kReadToken)}}), 403,
       "Bearer realm=\"keel\", error=\"insufficient_scope\", scope=\"admin:s\""},
      {"read token republishes",
       Request("POST", "/v1/streams/s/dead-letters/1:republish",
               {{"Authorization", Bearer(kReadToken)}}),
       403, "Bearer realm=\"keel\", error=\"insufficient_scope\", scope=\"admin:s\""},
      {"write token seeks",
       Request("POST", "/v1/streams/s/groups/g:seek", {{"Authorization", Bearer(kWriteToken)}}), 0,
       ""},
      // Without a route the method decides: a read token may not learn
      // which write routes exist, a write token gets its 404 or 405.
      {"read token POSTs to no route",
       Request("POST", "/v1/nothing", {{"Authorization", Bearer(kReadToken)}}), 403,
       "Bearer realm=\"keel\", error=\"insufficient_scope\", scope=\"publish\""},
      {"read token GETs no route",
       Request("GET", "/v1/nothing", {{"Authorization", Bearer(kReadToken)}}), 0, ""},
      {"write token POSTs to no route",
       Request("POST", "/v1/nothing", {{"Authorization", Bearer(kWriteToken)}}), 0, ""},
      {"query token on a POST to the SSE path",
       Request("POST", "/v1/streams/s/sse", {}, {{"access_token", kWriteToken}}), 401,
       "Bearer realm=\"keel\""},
      {"a probe's path with another method", Request("POST", "/healthz"), 0, ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::optional<RequestGate::Refusal> refusal = Check(gate, c.request, "127.0.0.1");
    if (c.status == 0) {
      EXPECT_EQ(refusal, std::nullopt);
      continue;
    }
    ASSERT_TRUE(refusal.has_value());
    EXPECT_EQ(refusal->response.status, c.status);
    EXPECT_EQ(refusal->code, c.status == 401 ? "unauthenticated" : "permission_denied");
    EXPECT_THAT(refusal->response.body,
                HasSubstr(absl::StrCat("\"code\":\"", refusal->code, "\"")));
    // A 403 names the scope the token lacks.
    if (c.status == 403) EXPECT_THAT(refusal->response.body, HasSubstr("\"scope\":\""));
    EXPECT_THAT(refusal->response.headers,
                ::testing::ElementsAre(std::make_pair(std::string("WWW-Authenticate"), c.challenge),
                                       std::make_pair(std::string("Access-Control-Expose-Headers"),
                                                      std::string("WWW-Authenticate"))));
  }
}

TEST(RequestGateTest, RateLimitComesBeforeTheTokenAndSparesHealthProbes) {
  RequestGate gate(nullptr, /*per_second=*/0.5, /*burst=*/1);
  EXPECT_EQ(Check(gate, Request("GET", "/v1/streams"), "10.0.0.7"), std::nullopt);
  std::optional<RequestGate::Refusal> refusal =
      Check(gate, Request("GET", "/v1/streams"), "10.0.0.7");
  ASSERT_TRUE(refusal.has_value());
  EXPECT_EQ(refusal->response.status, 429);
  EXPECT_EQ(refusal->code, "rate_limited");
  EXPECT_THAT(refusal->response.headers,
              ::testing::ElementsAre(std::make_pair(std::string("Retry-After"), std::string("2")),
                                     std::make_pair(std::string("Access-Control-Expose-Headers"),
                                                    std::string("Retry-After"))));
  EXPECT_EQ(Check(gate, Request("GET", "/healthz"), "10.0.0.7"), std::nullopt);
  EXPECT_EQ(Check(gate, Request("GET", "/v1/streams"), "10.0.0.8"), std::nullopt);

  // With tokens too, a client over its rate is refused before its token is
  // looked at: guessing tokens is rate-limited as well.
  RequestGate both(TokensOf(absl::StrCat("read ", kReadToken)), 0.5, 1);
  EXPECT_EQ(Check(both, Request("GET", "/v1/streams"), "c")->code, "unauthenticated");
  EXPECT_EQ(Check(both, Request("GET", "/v1/streams"), "c")->code, "rate_limited");
}

TEST(RequestGateTest, WithoutABurstAClientMaySendOneSecondsWorthAtOnce) {
  RequestGate gate(nullptr, /*per_second=*/2.5, /*burst=*/0);  // ceil(2.5) = 3.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Check(gate, Request("GET", "/v1/streams"), "c"), std::nullopt) << i;
  }
  EXPECT_TRUE(Check(gate, Request("GET", "/v1/streams"), "c").has_value());
  RequestGate slow(nullptr, /*per_second=*/0.1, /*burst=*/0);  // At least 1.
  EXPECT_EQ(Check(slow, Request("GET", "/v1/streams"), "c"), std::nullopt);
  EXPECT_TRUE(Check(slow, Request("GET", "/v1/streams"), "c").has_value());
}

TEST(RequestGateTest, AnOpenGateServesEverything) {
  RequestGate gate(nullptr, 0, 0);
  EXPECT_FALSE(gate.needs_client());
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(Check(gate, Request("POST", "/v1/streams/s/events"), ""), std::nullopt);
  }
}

TEST(RequestGateTest, ADaemonWithTokensLogsNoQuery) {
  // Parameter names are percent-decoded before use, so `acc%65ss_token` is
  // a token too: no query is safe to log.
  const RequestGate gate = TokenGate();
  EXPECT_EQ(gate.Loggable("GET /v1/streams/s/sse?access_token=secret-value&after=earliest"),
            "GET /v1/streams/s/sse");
  EXPECT_EQ(gate.Loggable("GET /v1/streams/s/sse?after=earliest&acc%65ss_token=secret"),
            "GET /v1/streams/s/sse");
  EXPECT_EQ(gate.Loggable("POST /v1/streams/s/events"), "POST /v1/streams/s/events");
  const RequestGate open(nullptr, 0, 0);
  EXPECT_EQ(open.Loggable("GET /v1/streams/s/events?after=earliest&limit=5"),
            "GET /v1/streams/s/events?after=earliest&limit=5");
}

// Two writer tokens share nothing: each has its own publish rate, and reads
// do not count against it.
TEST(TokenLimitsTest, EachTokenHasItsOwnPublishRate) {
  constexpr char kOtherWriter[] = "other-writer-token-0123";
  RequestGate gate(TokensOf(absl::StrCat("write ", kWriteToken, "\nwrite ", kOtherWriter)), 0, 0,
                   TokenLimits{.publish_rate = 0.5, .publish_burst = 1});
  auto publish = [&](absl::string_view token) {
    return Check(gate, Request("POST", "/v1/streams/s/events", {{"Authorization", Bearer(token)}}),
                 "same-address");
  };
  EXPECT_EQ(publish(kWriteToken), std::nullopt);
  std::optional<RequestGate::Refusal> refused = publish(kWriteToken);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->response.status, 429);
  EXPECT_EQ(refused->code, "rate_limited");
  EXPECT_THAT(refused->response.body, HasSubstr("publishes with this token"));
  EXPECT_EQ(publish(kOtherWriter), std::nullopt);
  EXPECT_EQ(Check(gate, Request("GET", "/v1/streams/s/events", {{"Authorization",
                                                                 Bearer(kWriteToken)}}),
                  "same-address"),
            std::nullopt);
}

// Without credentials, each client address counts as a token.
TEST(TokenLimitsTest, WithoutCredentialsTheClientAddressIsTheToken) {
  RequestGate gate(nullptr, 0, 0, TokenLimits{.publish_rate = 0.5, .publish_burst = 1});
  EXPECT_TRUE(gate.needs_client());
  EXPECT_EQ(Check(gate, Request("POST", "/v1/streams/s/events"), "10.0.0.1"), std::nullopt);
  EXPECT_EQ(Check(gate, Request("POST", "/v1/streams/s/events"), "10.0.0.1")->code,
            "rate_limited");
  EXPECT_EQ(Check(gate, Request("POST", "/v1/streams/s/events"), "10.0.0.2"), std::nullopt);
}

// Open SSE streams: a token past its own limit gets 429, the daemon past
// its total 503, both with Retry-After; a closed stream frees its slot.
TEST(TokenLimitsTest, SseStreamsAreCountedPerTokenAndInAll) {
  constexpr char kOtherReader[] = "other-reader-token-0123";
  RequestGate gate(TokensOf(absl::StrCat("read ", kReadToken, "\nread ", kOtherReader)), 0, 0,
                   TokenLimits{.sse_streams = 1, .sse_streams_total = 2});
  auto open = [&](absl::string_view token, std::unique_ptr<ConnectionSlot>* slot) {
    HttpRequest request =
        Request("GET", "/v1/streams/s/sse", {{"Authorization", Bearer(token)}});
    // Check tells the request's token to AdmitStream.
    EXPECT_EQ(gate.Check(request, Api::Resolve(request), "c", kStart), std::nullopt);
    return gate.AdmitStream(request, slot);
  };
  std::unique_ptr<ConnectionSlot> first, second, third;
  EXPECT_EQ(open(kReadToken, &first), std::nullopt);
  std::optional<RequestGate::Refusal> per_token = open(kReadToken, &second);
  ASSERT_TRUE(per_token.has_value());
  EXPECT_EQ(per_token->response.status, 429);
  EXPECT_EQ(per_token->code, "too_many_connections");
  EXPECT_THAT(per_token->response.headers,
              ::testing::Contains(std::make_pair(std::string("Retry-After"), std::string("2"))));
  EXPECT_EQ(open(kOtherReader, &second), std::nullopt);
  std::unique_ptr<ConnectionSlot> spare;
  RequestGate::Refusal in_all = *open(kOtherReader, &spare);
  EXPECT_EQ(in_all.response.status, 503);  // The total is reached before the token's own.
  EXPECT_EQ(in_all.code, "too_many_connections");
  first.reset();  // The first stream ended.
  EXPECT_EQ(open(kReadToken, &third), std::nullopt);
}

TEST(RateLimitKeyTest, IPv6ClientsAreTheirSlash64) {
  namespace ip = boost::asio::ip;
  EXPECT_EQ(RateLimitKey(ip::make_address("10.1.2.3")), "10.1.2.3");
  EXPECT_EQ(RateLimitKey(ip::make_address("::ffff:10.1.2.3")), "10.1.2.3");
  EXPECT_EQ(RateLimitKey(ip::make_address("2001:db8:1:2:3:4:5:6")), "2001:db8:1:2::/64");
  EXPECT_EQ(RateLimitKey(ip::make_address("2001:db8:1:2:ffff::1")), "2001:db8:1:2::/64");
  EXPECT_NE(RateLimitKey(ip::make_address("2001:db8:1:3::1")), "2001:db8:1:2::/64");
  EXPECT_EQ(RateLimitKey(ip::make_address("::1")), "::/64");
}

}  // namespace
}  // namespace keel::server
