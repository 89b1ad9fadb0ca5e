// Scoped and tenant-bound credentials over real sockets (rfcs/0004 §13):
// static tokens stored as hashes and JWTs of each algorithm, the 401s and
// the 403s that name the missing scope, scopes on stream prefixes, and a
// tenant-bound token that reads — in replay, SSE and consumer groups — and
// publishes only its tenant's events. (The first version's read/write
// tokens: access_test.cc; reloading on SIGHUP: auth_process_test.cc.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/client/errors.h"
#include "keel/cmd/keel/server/access_tokens.h"
#include "keel/cmd/keel/server/authenticator.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/cmd/daemon/jwt_signer.h"
#include "keel/tests/testing/status_matchers.h"
#include "keel/tests/testing/temp_dir.h"

namespace keel::daemon_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kAudience[] = "keel-scoped-test";
constexpr char kAdminToken[] = "admin-token-0000000000000001";
constexpr char kAcmeToken[] = "acme-orders-token-00000000002";       // publish+read orders., acme
constexpr char kGlobexToken[] = "globex-orders-token-0000000003";    // read orders., globex
constexpr char kOrdersReader[] = "orders-reader-token-000000004";    // read orders.
constexpr char kOrdersPublisher[] = "orders-publisher-token-00005";  // publish orders.

void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string HashLine(const std::string& token, std::vector<std::string> words) {
  absl::StatusOr<server::Grant> grant = server::Grant::Parse(absl::MakeConstSpan(words));
  EXPECT_OK(grant);
  return server::TokenHashLine(token, *grant) + "\n";
}

client::Headers Bearer(const std::string& token) {
  return {{"Authorization", absl::StrCat("Bearer ", token)}};
}

// The `error` object of a refusal.
json::object ErrorOf(const client::ClientResponse& response) {
  boost::system::error_code ec;
  json::value value = json::parse(response.body, ec);
  if (ec || !value.is_object() || !value.as_object().contains("error")) return {};
  return value.at("error").as_object();
}

class ScopedAccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server::AuthOptions auth;
    auth.tokens_file = dir_.Sub("tokens");
    WriteFile(auth.tokens_file,
              absl::StrCat("# every scope\n", HashLine(kAdminToken, {"publish", "read", "admin"}),
                           HashLine(kAcmeToken, {"publish:orders.", "read:orders.", "tenant=acme"}),
                           HashLine(kGlobexToken, {"read:orders.", "tenant=globex"}),
                           HashLine(kOrdersReader, {"read:orders."}),
                           HashLine(kOrdersPublisher, {"publish:orders."})));
    auth.jwt.hs256_secret_file = dir_.Sub("hs256.secret");
    WriteFile(auth.jwt.hs256_secret_file, hs_.secret + "\n");
    auth.jwt.public_key_file = dir_.Sub("rs256.pem");
    WriteFile(auth.jwt.public_key_file, rs_.public_pem);
    auth.jwt.jwks_file = dir_.Sub("jwks.json");
    WriteFile(auth.jwt.jwks_file, JwksOf({&es_}));
    auth.jwt.audience = kAudience;
    auth.jwt.leeway = absl::ZeroDuration();
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<server::Authenticator> authenticator,
                         server::Authenticator::Load(auth));
    DaemonOptions options;
    options.driver = "memory";
    options.server.authenticator = std::move(authenticator);
    daemon_ = std::make_unique<InProcessDaemon>(options);
    ASSERT_OK(daemon_->Start());
    admin_ = Client(kAdminToken);
  }

  std::unique_ptr<client::HttpClient> Client(const std::string& token) const {
    return std::make_unique<client::HttpClient>("127.0.0.1", daemon_->port(),
                                                client::ClientOptions{.token = token});
  }

  // Publishes as admin: acme, globex, untenanted, acme on orders.eu.
  void PublishMixedTenants() {
    ASSERT_OK(Publish(*admin_, "orders.eu", "t", "1", "acme").status());
    ASSERT_OK(Publish(*admin_, "orders.eu", "t", "2", "globex").status());
    ASSERT_OK(Publish(*admin_, "orders.eu", "t", "3").status());
    ASSERT_OK(Publish(*admin_, "orders.eu", "t", "4", "acme").status());
  }

  // The tenants of the events a replay of orders.eu with `token` returns.
  std::vector<std::string> ReplayedTenants(const std::string& token, std::string query = "") {
    auto reader = Client(token);
    absl::StatusOr<json::value> page =
        GetJson(*reader, "/v1/streams/orders.eu/events?after=earliest" + query);
    EXPECT_OK(page);
    std::vector<std::string> tenants;
    if (!page.ok()) return tenants;
    for (const json::value& event : page->at("events").as_array()) {
      const json::value* tenant = event.as_object().if_contains("tenant");
      tenants.push_back(tenant == nullptr ? "" : std::string(tenant->as_string()));
    }
    return tenants;
  }

  testing::TempDir dir_;
  SigningKey hs_ = NewHs256Key();
  SigningKey rs_ = NewRs256Key();
  SigningKey es_ = NewEs256Key("es-1");
  std::unique_ptr<InProcessDaemon> daemon_;
  std::unique_ptr<client::HttpClient> admin_;
};

TEST_F(ScopedAccessTest, RefusalsAre401WithoutAValidTokenAnd403NamingTheMissingScope) {
  PublishMixedTenants();
  const struct {
    std::string name;
    std::string method;
    std::string target;
    std::string token;
    int status;
    std::string scope;   // Of a 403.
    std::string stream;  // Of a 403 about one stream.
  } table[] = {
      {"no token", "GET", "/v1/streams/orders.eu/events", "", 401, "", ""},
      {"unknown token", "GET", "/v1/streams/orders.eu/events", "unknown-token-00000000000", 401, "",
       ""},
      {"publisher replays", "GET", "/v1/streams/orders.eu/events", kOrdersPublisher, 403, "read",
       "orders.eu"},
      {"publisher follows", "GET", "/v1/streams/orders.eu/sse", kOrdersPublisher, 403, "read",
       "orders.eu"},
      {"reader publishes", "POST", "/v1/streams/orders.eu/events", kOrdersReader, 403, "publish",
       "orders.eu"},
      {"publisher outside its prefix", "POST", "/v1/streams/billing/events", kAcmeToken, 403,
       "publish", "billing"},
      {"reader declares", "PUT", "/v1/streams/orders.eu", kOrdersReader, 403, "admin", "orders.eu"},
      {"reader seeks a group", "POST", "/v1/streams/orders.eu/groups/g:seek", kOrdersReader, 403,
       "admin", "orders.eu"},
      {"reader lists dead letters", "GET", "/v1/streams/orders.eu/dead-letters", kOrdersReader, 403,
       "admin", "orders.eu"},
      {"prefix reader scrapes metrics", "GET", "/metrics", kOrdersReader, 403, "read", ""},
      {"tenant reader scrapes metrics", "GET", "/metrics", kAcmeToken, 403, "read", ""},
      {"publisher lists streams", "GET", "/v1/streams", kOrdersPublisher, 403, "read", ""},
  };
  const StoreSnapshot before = SnapshotOf(daemon_->bus());
  for (const auto& row : table) {
    SCOPED_TRACE(row.name);
    auto http = Client(row.token);
    ASSERT_OK_AND_ASSIGN(client::ClientResponse response,
                         http->Request(row.method, row.target, R"({"type":"t","data":1})",
                                       {{"Content-Type", "application/json"}}));
    EXPECT_EQ(response.status, row.status) << response.body;
    const json::object error = ErrorOf(response);
    if (row.status == 401) {
      EXPECT_EQ(ErrorCode(response), "unauthenticated");
      continue;
    }
    EXPECT_EQ(ErrorCode(response), "permission_denied");
    EXPECT_EQ(error.at("scope"), json::value(row.scope)) << response.body;
    if (row.stream.empty()) {
      EXPECT_FALSE(error.contains("stream")) << response.body;
    } else {
      EXPECT_EQ(error.at("stream"), json::value(row.stream)) << response.body;
      EXPECT_THAT(response.Header("www-authenticate"),
                  HasSubstr(absl::StrCat("scope=\"", row.scope, ":", row.stream, "\"")));
    }
  }
  EXPECT_EQ(SnapshotOf(daemon_->bus()), before) << "a refused request changed the store";
}

TEST_F(ScopedAccessTest, PrefixScopesOpenOnlyTheStreamsUnderThem) {
  ASSERT_OK(Publish(*admin_, "orders.eu", "t", "1").status());
  ASSERT_OK(Publish(*admin_, "orders.us", "t", "1").status());
  ASSERT_OK(Publish(*admin_, "billing", "t", "1").status());
  ASSERT_OK(Publish(*admin_, "orders", "t", "1").status());  // No dot: not under "orders.".

  auto publisher = Client(kOrdersPublisher);
  EXPECT_OK(Publish(*publisher, "orders.us", "t", "2").status());
  ASSERT_OK_AND_ASSIGN(auto refused, PostEvents(*publisher, "orders", R"({"type":"t"})"));
  EXPECT_EQ(refused.status, 403);

  auto reader = Client(kOrdersReader);
  ASSERT_OK_AND_ASSIGN(json::value us, GetJson(*reader, "/v1/streams/orders.us/events"));
  EXPECT_EQ(us.at("events").as_array().size(), 2u);
  ASSERT_OK_AND_ASSIGN(auto billing, reader->Get("/v1/streams/billing/events"));
  EXPECT_EQ(billing.status, 403);
  // The stream list shows what the token may read, and ?prefix= narrows it.
  auto names = [&](const std::string& target) {
    std::vector<std::string> out;
    absl::StatusOr<json::value> list = GetJson(*reader, target);
    EXPECT_OK(list);
    if (!list.ok()) return out;
    for (const json::value& info : list->at("streams").as_array()) {
      out.emplace_back(info.at("stream").as_string());
    }
    return out;
  };
  EXPECT_THAT(names("/v1/streams"), ElementsAre("orders.eu", "orders.us"));
  EXPECT_THAT(names("/v1/streams?prefix=orders.u"), ElementsAre("orders.us"));
  EXPECT_THAT(names("/v1/streams?prefix=bill"), ElementsAre());
  auto everything = [&] {
    std::vector<std::string> out;
    absl::StatusOr<json::value> list = GetJson(*admin_, "/v1/streams");
    EXPECT_OK(list);
    for (const json::value& info : list->at("streams").as_array()) {
      out.emplace_back(info.at("stream").as_string());
    }
    return out;
  };
  EXPECT_THAT(everything(), ElementsAre("billing", "orders", "orders.eu", "orders.us"));
}

TEST_F(ScopedAccessTest, ATenantBoundReaderReplaysOnlyItsTenantsEvents) {
  PublishMixedTenants();
  EXPECT_THAT(ReplayedTenants(kAdminToken), ElementsAre("acme", "globex", "", "acme"));
  EXPECT_THAT(ReplayedTenants(kAcmeToken), ElementsAre("acme", "acme"));
  EXPECT_THAT(ReplayedTenants(kGlobexToken), ElementsAre("globex"));
  EXPECT_THAT(ReplayedTenants(kAcmeToken, "&tenant=acme"), ElementsAre("acme", "acme"));
  // Asking for another tenant is refused, not answered with nothing.
  auto acme = Client(kAcmeToken);
  ASSERT_OK_AND_ASSIGN(auto other,
                       acme->Get("/v1/streams/orders.eu/events?after=earliest&tenant=globex"));
  EXPECT_EQ(other.status, 403) << other.body;
  EXPECT_EQ(ErrorOf(other).at("scope"), json::value("read"));
}

TEST_F(ScopedAccessTest, ATenantBoundReaderFollowsOnlyItsTenantsEventsOverSse) {
  PublishMixedTenants();
  client::SseOptions follow;
  follow.stream = "orders.eu";
  follow.after = "earliest";
  follow.token = kAcmeToken;
  ASSERT_OK_AND_ASSIGN(auto sse, daemon_->OpenSse(follow));
  ASSERT_OK_AND_ASSIGN(auto history, ReadEvents(*sse, 2));
  EXPECT_THAT(SequencesOf(history), ElementsAre(1, 4));
  // Live: another tenant's event, then acme's; the follower gets acme's only.
  ASSERT_OK(Publish(*admin_, "orders.eu", "t", "5", "globex").status());
  ASSERT_OK(Publish(*admin_, "orders.eu", "t", "6").status());
  ASSERT_OK(Publish(*admin_, "orders.eu", "t", "7", "acme").status());
  ASSERT_OK_AND_ASSIGN(auto live, ReadEvents(*sse, 1));
  EXPECT_THAT(SequencesOf(live), ElementsAre(7));
  EXPECT_EQ(FrameJson(live[0]).at("tenant"), json::value("acme"));
  // A ?tenant= of another tenant is refused.
  client::SseOptions other = follow;
  other.tenant = "globex";
  absl::StatusOr<std::unique_ptr<client::SseReader>> refused = daemon_->OpenSse(other);
  ASSERT_FALSE(refused.ok());
  ASSERT_TRUE(client::GetHttpError(refused.status()).has_value()) << refused.status();
  EXPECT_EQ(client::GetHttpError(refused.status())->status, 403);
}

TEST_F(ScopedAccessTest, ATenantBoundReaderConsumesOnlyItsTenantsEventsInItsOwnGroups) {
  PublishMixedTenants();
  auto acme = Client(kAcmeToken);
  auto consume = [&](client::HttpClient& http, const std::string& group) {
    return http.PostJson(absl::StrCat("/v1/streams/orders.eu/groups/", group, ":consume"),
                         R"({"limit":2})");
  };
  // Its groups are named after it: another name is refused.
  ASSERT_OK_AND_ASSIGN(auto foreign, consume(*acme, "billing"));
  EXPECT_EQ(foreign.status, 403) << foreign.body;
  EXPECT_THAT(ErrorOf(foreign).at("message").as_string().c_str(), HasSubstr("'acme:"));

  std::vector<uint64_t> handled;
  for (int round = 0; round < 10; ++round) {
    ASSERT_OK_AND_ASSIGN(auto response, consume(*acme, "acme:billing"));
    ASSERT_EQ(response.status, 200) << response.body;
    json::object page = json::parse(response.body).as_object();
    for (const json::value& event : page.at("events").as_array()) {
      EXPECT_EQ(event.at("tenant"), json::value("acme"));
      handled.push_back(event.at("sequence").to_number<uint64_t>());
    }
    if (page.at("lease").is_null()) break;
    ASSERT_OK_AND_ASSIGN(
        auto committed,
        acme->PostJson("/v1/streams/orders.eu/groups/acme:billing:commit",
                       json::serialize(json::object{{"cursor", page.at("lease").at("to")},
                                                    {"token", page.at("lease").at("token")}})));
    ASSERT_EQ(committed.status, 200) << committed.body;
  }
  EXPECT_THAT(handled, ElementsAre(1, 4));

  auto globex = Client(kGlobexToken);
  ASSERT_OK_AND_ASSIGN(auto globex_page, consume(*globex, "globex:billing"));
  ASSERT_EQ(globex_page.status, 200) << globex_page.body;
  const json::array events = json::parse(globex_page.body).at("events").as_array();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].at("tenant"), json::value("globex"));

  // The group list shows a tenant its own groups only.
  ASSERT_OK_AND_ASSIGN(json::value listed, GetJson(*acme, "/v1/streams/orders.eu/groups"));
  std::vector<std::string> groups;
  for (const json::value& group : listed.at("groups").as_array()) {
    groups.emplace_back(group.at("group").as_string());
  }
  EXPECT_THAT(groups, ElementsAre("acme:billing"));
}

TEST_F(ScopedAccessTest, ATenantBoundPublisherPublishesOnlyWithItsTenant) {
  auto acme = Client(kAcmeToken);
  ASSERT_OK_AND_ASSIGN(
      auto other, PostEvents(*acme, "orders.eu", R"({"type":"t","data":1,"tenant":"globex"})"));
  EXPECT_EQ(other.status, 403) << other.body;
  EXPECT_EQ(ErrorOf(other).at("scope"), json::value("publish"));
  // A batch with one event of another tenant stores none of them.
  ASSERT_OK_AND_ASSIGN(auto batch,
                       PostEvents(*acme, "orders.eu",
                                  R"([{"type":"t","tenant":"acme"},{"type":"t","tenant":"x"}])"));
  EXPECT_EQ(batch.status, 403) << batch.body;
  EXPECT_EQ(SnapshotOf(daemon_->bus()), StoreSnapshot{});
  // Its own tenant, or none given: stored as its tenant's.
  ASSERT_OK(Publish(*acme, "orders.eu", "t", "1", "acme").status());
  ASSERT_OK(Publish(*acme, "orders.eu", "t", "2").status());
  EXPECT_THAT(ReplayedTenants(kAdminToken), ElementsAre("acme", "acme"));
}

TEST_F(ScopedAccessTest, JwtsOfEachAlgorithmOpenWhatTheirKeelClaimGrants) {
  PublishMixedTenants();
  for (const SigningKey* key : {&hs_, &rs_, &es_}) {
    SCOPED_TRACE(server::JwtAlgorithmName(key->algorithm));
    const std::string token =
        SignJwt(*key, Claims(kAudience, absl::Minutes(5), R"(["read:orders."])", "acme"));
    EXPECT_THAT(ReplayedTenants(token), ElementsAre("acme", "acme"));
    auto http = Client(token);
    ASSERT_OK_AND_ASSIGN(auto publish, PostEvents(*http, "orders.eu", R"({"type":"t"})"));
    EXPECT_EQ(publish.status, 403) << publish.body;
    EXPECT_EQ(ErrorOf(publish).at("scope"), json::value("publish"));
    // And over SSE.
    client::SseOptions follow;
    follow.stream = "orders.eu";
    follow.after = "earliest";
    follow.token = token;
    ASSERT_OK_AND_ASSIGN(auto sse, daemon_->OpenSse(follow));
    ASSERT_OK_AND_ASSIGN(auto frames, ReadEvents(*sse, 2));
    EXPECT_THAT(SequencesOf(frames), ElementsAre(1, 4));
  }
}

TEST_F(ScopedAccessTest, JwtsExpiredNotYetValidForAnotherAudienceOrBadlySignedAre401) {
  const std::string scopes = R"(["read"])";
  std::string bad_signature = SignJwt(es_, Claims(kAudience, absl::Minutes(5), scopes));
  char& c = bad_signature[bad_signature.size() - 5];
  c = c == 'A' ? 'B' : 'A';
  const SigningKey unknown = NewRs256Key();
  const struct {
    std::string name;
    std::string token;
    std::string reason;
  } table[] = {
      {"expired", SignJwt(hs_, Claims(kAudience, -absl::Seconds(5), scopes)), "expired"},
      {"not yet valid",
       SignJwt(rs_, Claims(kAudience, absl::Minutes(10), scopes, "",
                           absl::StrCat(",\"nbf\":", UnixNow(absl::Minutes(5))))),
       "not valid yet"},
      {"another audience", SignJwt(es_, Claims("someone-else", absl::Minutes(5), scopes)), "'aud'"},
      {"bad signature", bad_signature, "verifies its signature"},
      {"unknown key", SignJwt(unknown, Claims(kAudience, absl::Minutes(5), scopes)),
       "verifies its signature"},
  };
  for (const auto& row : table) {
    SCOPED_TRACE(row.name);
    auto http = Client(row.token);
    ASSERT_OK_AND_ASSIGN(auto response, http->Get("/v1/streams"));
    EXPECT_EQ(response.status, 401) << response.body;
    EXPECT_EQ(ErrorCode(response), "unauthenticated");
    EXPECT_THAT(ErrorOf(response).at("message").as_string().c_str(), HasSubstr(row.reason));
    EXPECT_EQ(response.Header("www-authenticate"),
              "Bearer realm=\"keel\", error=\"invalid_token\"");
  }
}

}  // namespace
}  // namespace keel::daemon_test
