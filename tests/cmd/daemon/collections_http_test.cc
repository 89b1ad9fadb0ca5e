// Collections over HTTP (rfcs/0004-http-api.md §15) and `keel collection`,
// against an in-process daemon on the durable driver: status codes,
// ETag/If-Match, time travel by cursor and time, history, and the change
// events on the collection's stream.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "keel/cmd/keel/command.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/cmd/run_keel.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class CollectionsHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(daemon_.Start());
    http_ = daemon_.NewClient();
  }

  static std::string DocTarget(const std::string& id,
                               std::vector<std::pair<std::string, std::string>> query = {}) {
    return client::BuildTarget({"v1", "collections", "users", "docs", id}, query);
  }
  client::ClientResponse Put(const std::string& id, const std::string& body,
                             client::Headers headers = {}) {
    headers.emplace_back("Content-Type", "application/json");
    absl::StatusOr<client::ClientResponse> response =
        http_->Request("PUT", DocTarget(id), body, headers);
    EXPECT_OK(response.status());
    return response.ok() ? *response : client::ClientResponse{};
  }
  client::ClientResponse Send(const std::string& method, const std::string& target,
                              client::Headers headers = {}) {
    absl::StatusOr<client::ClientResponse> response = http_->Request(method, target, "", headers);
    EXPECT_OK(response.status());
    return response.ok() ? *response : client::ClientResponse{};
  }
  static json::object Body(const client::ClientResponse& response) {
    return json::parse(response.body).as_object();
  }
  static std::string Header(const client::ClientResponse& response, const std::string& name) {
    for (const auto& [key, value] : response.headers) {
      if (key == name) return value;
    }
    return "";
  }

  InProcessDaemon daemon_;
  std::unique_ptr<client::HttpClient> http_;
};

TEST_F(CollectionsHttpTest, PutUpdatesWithIfMatchAndRefusesAStaleVersion) {
  client::ClientResponse created = Put("u1", R"({"name":"Ada"})");
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(Header(created, "etag"), "\"1\"");
  EXPECT_EQ(Body(created).at("doc").at("name").as_string(), "Ada");

  client::ClientResponse updated = Put("u1", R"({"name":"Ada L."})", {{"If-Match", "\"1\""}});
  ASSERT_EQ(updated.status, 200) << updated.body;
  EXPECT_EQ(Body(updated).at("version").to_number<uint64_t>(), 2u);

  client::ClientResponse stale = Put("u1", R"({"name":"lost"})", {{"If-Match", "\"1\""}});
  ASSERT_EQ(stale.status, 409) << stale.body;
  EXPECT_EQ(Body(stale).at("error").at("actual").to_number<uint64_t>(), 2u);
  client::ClientResponse exists = Put("u1", R"({"name":"lost"})", {{"If-None-Match", "*"}});
  EXPECT_EQ(exists.status, 409) << exists.body;

  client::ClientResponse now = Send("GET", DocTarget("u1"));
  ASSERT_EQ(now.status, 200) << now.body;
  EXPECT_EQ(Body(now).at("doc").at("name").as_string(), "Ada L.");
  EXPECT_EQ(Header(now, "etag"), "\"2\"");
}

TEST_F(CollectionsHttpTest, BadInputIsRefusedAndStoresNothing) {
  client::ClientResponse not_json = Put("u1", R"({"name":)");
  EXPECT_EQ(not_json.status, 400) << not_json.body;
  absl::StatusOr<client::ClientResponse> text =
      http_->Request("PUT", DocTarget("u1"), "Ada", {{"Content-Type", "text/plain"}});
  ASSERT_OK(text.status());
  EXPECT_EQ(text->status, 415) << text->body;
  client::ClientResponse bad_match = Put("u1", "{}", {{"If-Match", "soon"}});
  EXPECT_EQ(bad_match.status, 400) << bad_match.body;

  EXPECT_EQ(Send("GET", DocTarget("u1")).status, 404);
  // The refused writes took no version and no sequence.
  client::ClientResponse first = Put("u1", "{}");
  ASSERT_EQ(first.status, 201) << first.body;
  EXPECT_EQ(Body(first).at("version").to_number<uint64_t>(), 1u);
  EXPECT_EQ(Body(first).at("sequence").to_number<uint64_t>(), 1u);
}

TEST_F(CollectionsHttpTest, ChangeEventsHistoryAndTimeTravel) {
  const std::string v1 = Body(Put("u1", R"({"n":1})")).at("cursor").as_string().c_str();
  Put("u2", R"({"other":true})");
  const client::ClientResponse second = Put("u1", R"({"n":2})");
  const std::string time2 = Body(second).at("time").as_string().c_str();
  client::ClientResponse deleted = Send("DELETE", DocTarget("u1"), {{"If-Match", "2"}});
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_TRUE(Body(deleted).at("deleted").as_bool());
  EXPECT_EQ(Send("GET", DocTarget("u1")).status, 404);
  EXPECT_EQ(Send("DELETE", DocTarget("u1")).status, 404);

  client::ClientResponse at_v1 = Send("GET", DocTarget("u1", {{"at", v1}}));
  ASSERT_EQ(at_v1.status, 200) << at_v1.body;
  EXPECT_EQ(Body(at_v1).at("doc").at("n").to_number<int>(), 1);
  client::ClientResponse at_time = Send("GET", DocTarget("u1", {{"at", time2}}));
  ASSERT_EQ(at_time.status, 200) << at_time.body;
  EXPECT_EQ(Body(at_time).at("doc").at("n").to_number<int>(), 2);
  EXPECT_EQ(Send("GET", DocTarget("u1", {{"at", "yesterday"}})).status, 400);

  client::ClientResponse history =
      Send("GET", client::BuildTarget({"v1", "collections", "users", "docs", "u1", "history"}));
  ASSERT_EQ(history.status, 200) << history.body;
  std::vector<uint64_t> versions;
  const json::object listed = Body(history);
  for (const json::value& version : listed.at("versions").as_array()) {
    versions.push_back(version.at("version").to_number<uint64_t>());
  }
  EXPECT_THAT(versions, ElementsAre(1, 2, 3));

  // The change stream is an ordinary stream: its events carry before/after.
  ASSERT_OK_AND_ASSIGN(json::value page,
                       GetJson(*http_, client::BuildTarget({"v1", "streams", "users", "events"})));
  std::vector<std::string> types;
  for (const json::value& event : page.at("events").as_array()) {
    types.emplace_back(event.at("type").as_string());
  }
  ASSERT_THAT(types, ElementsAre("users.insert", "users.insert", "users.update", "users.delete"));
  const json::value& update = page.at("events").as_array()[2].at("data");
  EXPECT_EQ(update.at("before").at("n").to_number<int>(), 1);
  EXPECT_EQ(update.at("after").at("n").to_number<int>(), 2);
}

TEST_F(CollectionsHttpTest, TheCliPutsGetsDeletesAndListsHistory) {
  auto keel = [this](std::vector<std::string> args) {
    args.insert(args.begin(), "collection");
    const std::vector<std::string> common = {
        "--server", daemon_.address(), "--collection", "users", "--id", "u1"};
    args.insert(args.end(), common.begin(), common.end());
    return ::keel::testing::RunKeel(std::move(args));
  };
  ::keel::testing::KeelRun put = keel({"put", "--data", R"({"name":"Ada"})", "--if-match", "0"});
  ASSERT_EQ(put.code, cli::kExitOk) << put.err;
  EXPECT_THAT(put.out, HasSubstr(R"("version":1)"));
  ::keel::testing::KeelRun again = keel({"put", "--data", "{}", "--if-match", "0"});
  EXPECT_EQ(again.code, cli::kExitFailure);
  EXPECT_THAT(again.err, HasSubstr("conflict"));
  ::keel::testing::KeelRun not_json = keel({"put", "--data", "{"});
  EXPECT_EQ(not_json.code, cli::kExitUsage);
  EXPECT_EQ(keel({"get", "--if-match", "1"}).code, cli::kExitUsage);
  EXPECT_EQ(keel({"history", "--at", "2026-12-07T00:00:00Z"}).code, cli::kExitUsage);
  ASSERT_EQ(keel({"put", "--data", R"({"name":"Ada L."})", "--if-match", "1"}).code, cli::kExitOk);

  const std::string v1 = json::parse(put.out).at("cursor").as_string().c_str();
  ::keel::testing::KeelRun at = keel({"get", "--at", v1});
  ASSERT_EQ(at.code, cli::kExitOk) << at.err;
  EXPECT_THAT(at.out, HasSubstr(R"("name":"Ada")"));
  ASSERT_EQ(keel({"delete"}).code, cli::kExitOk);
  EXPECT_EQ(keel({"get"}).code, cli::kExitFailure);

  ::keel::testing::KeelRun history = keel({"history"});
  ASSERT_EQ(history.code, cli::kExitOk) << history.err;
  EXPECT_EQ(std::count(history.out.begin(), history.out.end(), '\n'), 3);
  EXPECT_THAT(history.out, HasSubstr(R"("deleted":true)"));

  // As deep as the daemon takes (more than a JSON parser's default 32).
  const std::string deep = std::string(60, '[') + std::string(60, ']');
  ::keel::testing::KeelRun nested = keel({"put", "--data", deep});
  ASSERT_EQ(nested.code, cli::kExitOk) << nested.err;
  ::keel::testing::KeelRun got = keel({"get"});
  ASSERT_EQ(got.code, cli::kExitOk) << got.err;
  EXPECT_THAT(got.out, HasSubstr(deep));
}

}  // namespace
}  // namespace keel::daemon_test
