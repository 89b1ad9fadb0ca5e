// /v1/subscriptions and `keel subscription` against a PushDaemon:
// declaring (again, and with drift), listing, describing, pausing,
// resuming, deleting, persistence across a restart, and refusals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "keel/tests/cmd/run_keel.h"
#include "keel/tests/push/push_daemon.h"

namespace keel::push_test {
namespace {

using keel::testing::RunKeel;

constexpr char kSecret[] = "0123456789abcdef-secret";

std::string Code(const client::ClientResponse& response) {
  return std::string(json::parse(response.body).at("error").at("code").as_string());
}

class SubscriptionsApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(daemon_.Start().ok());
    http_ = daemon_.NewClient();
  }
  std::vector<std::string> Keel(std::vector<std::string> args) {
    args.insert(args.begin() + 2, {"--server", daemon_.address()});
    keel::testing::KeelRun run = RunKeel(args);
    return {absl::StrCat(run.code), run.out, run.err};
  }

  PushDaemon daemon_;
  std::unique_ptr<client::HttpClient> http_;
  TestReceiver receiver_{[](const ReceivedRequest&, int) { return Reply{200}; }};
};

// The CLI's flags for concurrency, the circuit and dead-letter retention
// reach the declaration, which a restart keeps.
TEST_F(SubscriptionsApiTest, CliSetsConcurrencyCircuitAndDeadLetterRetention) {
  std::vector<std::string> run = Keel({"subscription",
                                       "create",
                                       "--name",
                                       "tuned",
                                       "--streams",
                                       "orders",
                                       "--endpoint",
                                       receiver_.url(),
                                       "--secret",
                                       kSecret,
                                       "--concurrency",
                                       "4",
                                       "--circuit-failures",
                                       "7",
                                       "--circuit-open-ms",
                                       "2000",
                                       "--dead-letter-max-age",
                                       "168h",
                                       "--dead-letter-max-events",
                                       "1000"});
  ASSERT_EQ(run[0], "0") << run[2];
  ASSERT_TRUE(daemon_.Restart().ok());
  run = Keel({"subscription", "describe", "--name", "tuned"});
  ASSERT_EQ(run[0], "0") << run[2];
  const json::object status = json::parse(run[1]).as_object();
  EXPECT_EQ(status.at("concurrency").to_number<int>(), 4);
  EXPECT_EQ(status.at("circuit").at("failureThreshold").to_number<int>(), 7);
  EXPECT_EQ(status.at("circuit").at("openMs").to_number<int>(), 2000);
  EXPECT_EQ(status.at("circuitState").at("state").as_string(), "closed");
  EXPECT_EQ(status.at("deadLetterRetention").at("maxAge").as_string(), "168h");
  EXPECT_EQ(status.at("deadLetterRetention").at("maxEvents").to_number<int>(), 1000);
  // The retention is the dead-letter stream's policy.
  absl::StatusOr<client::ClientResponse> policy =
      daemon_.NewClient()->Get("/v1/streams/push.tuned");
  ASSERT_TRUE(policy.ok() && policy->status == 200) << (policy.ok() ? policy->body : "");
  EXPECT_TRUE(absl::StrContains(policy->body, "\"deadLetterRetention\":{\"maxAge\":\"168h\""))
      << policy->body;
}

TEST_F(SubscriptionsApiTest, CliDeclaresPausesResumesAndDeletesAndTheyPersist) {
  std::vector<std::string> run =
      Keel({"subscription", "create", "--name", "hook", "--streams", "orders.*", "--endpoint",
            receiver_.url(), "--secret", kSecret, "--batch-size", "10"});
  ASSERT_EQ(run[0], "0") << run[2];
  EXPECT_TRUE(absl::StrContains(run[1], "\"batchSize\":10"));
  EXPECT_FALSE(absl::StrContains(run[1], kSecret));
  // The same declaration again: a no-op; another one: drift.
  EXPECT_EQ(Keel({"subscription", "create", "--name", "hook", "--streams", "orders.*", "--endpoint",
                  receiver_.url(), "--secret", kSecret, "--batch-size", "10"})[0],
            "0");
  run = Keel({"subscription", "create", "--name", "hook", "--streams", "orders.*", "--endpoint",
              receiver_.url(), "--secret", kSecret, "--batch-size", "11"});
  EXPECT_EQ(run[0], "1");
  EXPECT_TRUE(absl::StrContains(run[2], "resource_drift")) << run[2];
  EXPECT_TRUE(absl::StrContains(run[2], "batchSize")) << run[2];

  ASSERT_EQ(Keel({"subscription", "pause", "--name", "hook"})[0], "0");
  ASSERT_TRUE(PublishN(*http_, "orders.eu", "order.created", 1).ok());
  // Paused: the event waits (lag 1) and survives a restart paused.
  ASSERT_TRUE(daemon_.Restart().ok());
  http_ = daemon_.NewClient();
  run = Keel({"subscription", "describe", "--name", "hook"});
  ASSERT_EQ(run[0], "0") << run[2];
  json::object status = json::parse(run[1]).as_object();
  EXPECT_EQ(status.at("state").as_string(), "paused");
  EXPECT_EQ(status.at("lag").to_number<int>(), 1);
  EXPECT_TRUE(receiver_.requests().empty());

  ASSERT_EQ(Keel({"subscription", "resume", "--name", "hook"})[0], "0");
  ASSERT_TRUE(receiver_.WaitFor([](const auto& r) { return Acknowledged(r).size() >= 1; }, kWait));
  run = Keel({"subscription", "list"});
  ASSERT_EQ(run[0], "0");
  EXPECT_TRUE(absl::StartsWith(run[1], "{\"name\":\"hook\""));

  ASSERT_EQ(Keel({"subscription", "delete", "--name", "hook"})[0], "0");
  ASSERT_TRUE(daemon_.Restart().ok());
  run = Keel({"subscription", "describe", "--name", "hook"});
  EXPECT_EQ(run[0], "1");
  EXPECT_TRUE(absl::StrContains(run[2], "not_found")) << run[2];
}

TEST_F(SubscriptionsApiTest, RefusesBadDeclarationsAndTheDaemonItself) {
  auto create = [&](const std::string& body) {
    absl::StatusOr<client::ClientResponse> response = http_->PostJson("/v1/subscriptions", body);
    EXPECT_TRUE(response.ok());
    return *response;
  };
  const std::string ok_tail = absl::StrCat(",\"secrets\":[\"", kSecret, "\"]}");
  client::ClientResponse r =
      create(absl::StrCat("{\"name\":\"a\",\"streams\":\"o\",\"endpoint\":\"ftp://x/\"", ok_tail));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Code(r), "invalid_argument");
  r = create(absl::StrCat("{\"name\":\"a\",\"streams\":\"o\",\"endpoint\":\"", receiver_.url(),
                          "\",\"colour\":1", ok_tail));
  EXPECT_EQ(r.status, 400);
  r = create(absl::StrCat("{\"name\":\"a\",\"streams\":\"o\",\"endpoint\":\"", receiver_.url(),
                          "\",\"secrets\":[\"short\"]}"));
  EXPECT_EQ(r.status, 400);
  r = create(absl::StrCat("{\"name\":\"loop\",\"streams\":\"o\",\"endpoint\":\"http://",
                          daemon_.address(), "/v1/streams/x/events\"", ok_tail));
  EXPECT_EQ(r.status, 400);
  EXPECT_TRUE(absl::StrContains(r.body, "allowSelf")) << r.body;
  absl::StatusOr<client::ClientResponse> missing = http_->Get("/v1/subscriptions/nope");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);
}

// Redrive names a subscription and, optionally, a range of dead letters;
// with none to send it answers and does nothing.
TEST_F(SubscriptionsApiTest, RedriveRefusesBadRangesAndUnknownNames) {
  std::vector<std::string> run =
      Keel({"subscription", "create", "--name", "hook", "--streams", "orders", "--endpoint",
            receiver_.url(), "--secret", kSecret});
  ASSERT_EQ(run[0], "0") << run[2];
  auto redrive = [&](const std::string& name, const std::string& body) {
    absl::StatusOr<client::ClientResponse> response =
        http_->PostJson("/v1/subscriptions/" + name + ":redrive", body);
    EXPECT_TRUE(response.ok());
    return *response;
  };
  EXPECT_EQ(redrive("nope", "").status, 404);
  for (const char* body : {R"({"fromSequence":0})", R"({"colour":1})", R"({"toSequence":"2"})",
                           R"({"fromSequence":3,"toSequence":2})", "[]"}) {
    client::ClientResponse r = redrive("hook", body);
    EXPECT_EQ(r.status, 400) << body;
    EXPECT_EQ(Code(r), "invalid_argument") << body;
  }
  run = Keel({"subscription", "redrive", "--name", "hook", "--from-sequence", "1"});
  ASSERT_EQ(run[0], "0") << run[2];
  EXPECT_EQ(json::parse(run[1]).at("redrive").at("state").as_string(), "none");
}

// Only matching events go out: the type prefix and tenant filter, and
// streams the pattern does not name.
TEST_F(SubscriptionsApiTest, FiltersByPatternTypeAndTenant) {
  json::object d;
  d["name"] = "eu-orders";
  d["streams"] = "orders.*.eu";
  d["typePrefix"] = "order.";
  d["tenant"] = "acme";
  d["endpoint"] = receiver_.url();
  d["secrets"] = json::array{kSecret};
  absl::StatusOr<client::ClientResponse> created = CreateSubscription(*http_, d);
  ASSERT_TRUE(created.ok() && created->status == 201) << created->body;
  auto publish = [&](const std::string& stream, const std::string& type, const std::string& tenant,
                     int n) {
    return http_->PostJson(client::BuildTarget({"v1", "streams", stream, "events"}),
                           absl::StrCat("{\"type\":\"", type, "\",\"tenant\":\"", tenant,
                                        "\",\"data\":{\"n\":", n, "}}"));
  };
  ASSERT_TRUE(publish("orders.shop.eu", "order.created", "acme", 1).ok());
  ASSERT_TRUE(publish("orders.shop.eu", "invoice.sent", "acme", 2).ok());
  ASSERT_TRUE(publish("orders.shop.eu", "order.created", "other", 3).ok());
  ASSERT_TRUE(publish("orders.shop.us", "order.created", "acme", 4).ok());
  ASSERT_TRUE(publish("orders.shop.eu", "order.paid", "acme", 5).ok());
  ASSERT_TRUE(receiver_.WaitFor(
      [](const auto& r) {
        std::vector<Delivered> got = Acknowledged(r);
        return !got.empty() && got.back().n == 5;
      },
      kWait));
  std::vector<int> got;
  for (const Delivered& event : Acknowledged(receiver_.requests())) got.push_back(event.n);
  EXPECT_THAT(got, ::testing::ElementsAre(1, 5));
}

}  // namespace
}  // namespace keel::push_test
