// Consumer groups and dead letters over HTTP: consume, commit, seek,
// describe and list; a consume across a retention gap; a stale token is a
// 409 with details; dead letters
// listed, shown and republished; lag in /metrics; state across a restart.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "keel/core/group_processor.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class GroupsApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(daemon_.Start());
    http_ = daemon_.NewClient();
  }

  std::string GroupTarget(const std::string& stream, const std::string& segment) {
    return client::BuildTarget({"v1", "streams", stream, "groups", segment});
  }

  absl::StatusOr<client::ClientResponse> Post(const std::string& target, const json::value& body) {
    return http_->PostJson(target, json::serialize(body));
  }

  // POSTs and parses a 200 answer.
  json::object PostOk(const std::string& target, const json::value& body) {
    absl::StatusOr<client::ClientResponse> response = Post(target, body);
    EXPECT_TRUE(response.ok()) << response.status();
    if (!response.ok()) return {};
    EXPECT_EQ(response->status, 200) << response->body;
    return json::parse(response->body).as_object();
  }

  json::object Consume(const std::string& stream, const std::string& group, int limit,
                       int lease_ms) {
    return PostOk(GroupTarget(stream, group + ":consume"),
                  json::object{{"limit", limit}, {"leaseMs", lease_ms}});
  }

  static std::vector<uint64_t> Sequences(const json::object& page) {
    std::vector<uint64_t> out;
    for (const json::value& event : page.at("events").as_array()) {
      out.push_back(event.at("sequence").to_number<uint64_t>());
    }
    return out;
  }

  void PublishN(const std::string& stream, int n) {
    for (int i = 0; i < n; ++i) {
      ASSERT_OK(Publish(*http_, stream, "t", absl::StrCat(i)).status());
    }
  }

  InProcessDaemon daemon_;
  std::unique_ptr<client::HttpClient> http_;
};

TEST_F(GroupsApiTest, ConsumeCommitDescribeAndList) {
  PublishN("orders", 3);
  json::object page = Consume("orders", "billing", 2, 60'000);
  EXPECT_THAT(Sequences(page), ElementsAre(1, 2));
  const json::object& lease = page.at("lease").as_object();
  const uint64_t token = lease.at("token").to_number<uint64_t>();
  EXPECT_GT(token, 0u);
  EXPECT_EQ(lease.at("to"), page.at("events").as_array()[1].at("cursor"));

  ASSERT_OK_AND_ASSIGN(json::value described, GetJson(*http_, GroupTarget("orders", "billing")));
  EXPECT_EQ(described.at("lag").to_number<uint64_t>(), 3u);
  EXPECT_EQ(described.at("lease").at("token").to_number<uint64_t>(), token);

  json::object info = PostOk(GroupTarget("orders", "billing:commit"),
                             json::object{{"cursor", lease.at("to")}, {"token", token}});
  EXPECT_EQ(info.at("committedSequence").to_number<uint64_t>(), 2u);
  EXPECT_EQ(info.at("cursor"), lease.at("to"));
  EXPECT_EQ(info.at("lag").to_number<uint64_t>(), 1u);
  EXPECT_FALSE(info.contains("lease"));

  ASSERT_OK_AND_ASSIGN(json::value list, GetJson(*http_, client::BuildTarget(
                                                             {"v1", "streams", "orders", "groups"})));
  ASSERT_EQ(list.at("groups").as_array().size(), 1u);
  EXPECT_EQ(list.at("groups").as_array()[0].at("group").as_string(), "billing");
}

TEST_F(GroupsApiTest, LiveLeaseAnswersBusyAndStaleTokenIsA409) {
  PublishN("jobs", 2);
  json::object held = Consume("jobs", "g", 10, 60'000);
  json::object busy = Consume("jobs", "g", 10, 60'000);
  EXPECT_TRUE(busy.at("events").as_array().empty());
  EXPECT_TRUE(busy.at("lease").is_null());
  EXPECT_EQ(busy.at("busyUntil"), held.at("lease").at("expires"));

  // Fence the holder with a seek, then grant the page again.
  PostOk(GroupTarget("jobs", "g:seek"), json::object{{"to", "earliest"}});
  json::object again = Consume("jobs", "g", 10, 60'000);
  EXPECT_THAT(Sequences(again), ElementsAre(1, 2));
  const uint64_t old_token = held.at("lease").at("token").to_number<uint64_t>();
  const uint64_t new_token = again.at("lease").at("token").to_number<uint64_t>();
  EXPECT_GT(new_token, old_token);
  ASSERT_OK_AND_ASSIGN(
      client::ClientResponse stale,
      Post(GroupTarget("jobs", "g:commit"),
           json::object{{"cursor", held.at("lease").at("to")}, {"token", old_token}}));
  EXPECT_EQ(stale.status, 409);
  EXPECT_EQ(ErrorCode(stale), "conflict");
  json::object error = json::parse(stale.body).at("error").as_object();
  EXPECT_EQ(error.at("expected").to_number<uint64_t>(), new_token);
  EXPECT_EQ(error.at("actual").to_number<uint64_t>(), old_token);
}

TEST_F(GroupsApiTest, ExpiredLeaseIsRedelivered) {
  PublishN("redo", 2);
  json::object crashed = Consume("redo", "g", 10, 1);
  const uint64_t token = crashed.at("lease").at("token").to_number<uint64_t>();
  // Waits (with a generous bound) for the 1 ms lease to run out.
  json::object again;
  const absl::Time deadline = absl::Now() + kWait;
  do {
    again = Consume("redo", "g", 10, 60'000);
  } while (again.at("lease").is_null() && absl::Now() < deadline);
  ASSERT_FALSE(again.at("lease").is_null());
  EXPECT_THAT(Sequences(again), ElementsAre(1, 2));
  EXPECT_GT(again.at("lease").at("token").to_number<uint64_t>(), token);
}

TEST_F(GroupsApiTest, SeekToLatestCursorAndTime) {
  PublishN("seek", 4);
  json::object latest = PostOk(GroupTarget("seek", "g:seek"), json::object{{"to", "latest"}});
  EXPECT_EQ(latest.at("committedSequence").to_number<uint64_t>(), 4u);
  EXPECT_EQ(latest.at("lag").to_number<uint64_t>(), 0u);
  ASSERT_OK_AND_ASSIGN(json::value events,
                       GetJson(*http_, client::BuildTarget({"v1", "streams", "seek", "events"})));
  const json::value& second = events.at("events").as_array()[1];
  PostOk(GroupTarget("seek", "g:seek"), json::object{{"to", second.at("cursor")}});
  EXPECT_THAT(Sequences(Consume("seek", "g", 10, 60'000)), ElementsAre(3, 4));
  json::object by_time =
      PostOk(GroupTarget("seek", "g:seek"), json::object{{"time", second.at("time")}});
  EXPECT_EQ(by_time.at("committedSequence").to_number<uint64_t>(), 1u)
      << "a time seek starts at the first event published at or after it";
}

TEST_F(GroupsApiTest, ConsumeStartingAtLatestSkipsWhatCameBeforeTheGroup) {
  PublishN("late", 3);
  const std::string consume = GroupTarget("late", "g:consume");
  json::object first = PostOk(consume, json::object{{"start", "latest"}, {"leaseMs", 60'000}});
  EXPECT_THAT(Sequences(first), ::testing::IsEmpty());
  PublishN("late", 2);
  // The start is remembered: a later consume (here without "start") goes on from it.
  EXPECT_THAT(Sequences(PostOk(consume, json::object{{"leaseMs", 60'000}})), ElementsAre(4, 5));
}

TEST_F(GroupsApiTest, ConsumeAcrossARetentionGapReportsItAndCommitsPastIt) {
  ASSERT_OK_AND_ASSIGN(auto declared,
                       http_->Request("PUT", client::BuildTarget({"v1", "streams", "capped"}),
                                      R"({"retention":{"maxEvents":5}})",
                                      {{"Content-Type", "application/json"}}));
  ASSERT_EQ(declared.status, 200) << declared.body;
  PublishN("capped", 1);
  json::object first = Consume("capped", "g", 1, 60'000);
  ASSERT_THAT(Sequences(first), ElementsAre(1));
  const json::value requested = first.at("lease").at("to");
  PostOk(GroupTarget("capped", "g:commit"),
         json::object{{"cursor", requested}, {"token", first.at("lease").at("token")}});
  PublishN("capped", 19);
  // The daemon's trimmer keeps the last 5 of the 20 events.
  ASSERT_OK_AND_ASSIGN(json::object bounds, AwaitTrimmed(*http_, "capped", 16));
  ASSERT_EQ(bounds.at("firstSequence").to_number<uint64_t>(), 16u) << "the trimmer did not trim";

  json::object page = Consume("capped", "g", 10, 60'000);
  EXPECT_THAT(Sequences(page), ElementsAre(16, 17, 18, 19, 20));
  ASSERT_TRUE(page.contains("gap")) << json::serialize(page);
  EXPECT_EQ(page.at("gap").at("requested"), requested);
  EXPECT_EQ(page.at("gap").at("oldestSequence").to_number<uint64_t>(), 16u);
  EXPECT_EQ(page.at("gap").at("missed").to_number<uint64_t>(), 14u);  // Events 2 to 15.
  json::object info = PostOk(
      GroupTarget("capped", "g:commit"),
      json::object{{"cursor", page.at("lease").at("to")}, {"token", page.at("lease").at("token")}});
  EXPECT_EQ(info.at("committedSequence").to_number<uint64_t>(), 20u);
  EXPECT_EQ(info.at("lag").to_number<uint64_t>(), 0u);
}

TEST_F(GroupsApiTest, BadRequestsAndRoutes) {
  PublishN("bad", 1);
  auto status_of = [&](const std::string& target, const std::string& body) {
    absl::StatusOr<client::ClientResponse> response = http_->PostJson(target, body);
    return response.ok() ? response->status : -1;
  };
  EXPECT_EQ(status_of(GroupTarget("bad", "g:seek"), R"({"to":"earliest","time":"x"})"), 400);
  EXPECT_EQ(status_of(GroupTarget("bad", "g:seek"), R"({"to":"not-a-cursor"})"), 400);
  EXPECT_EQ(status_of(GroupTarget("bad", "g:consume"), R"({"limit":0})"), 400);
  EXPECT_EQ(status_of(GroupTarget("bad", "g:consume"), R"({"leaseMs":0})"), 400);
  EXPECT_EQ(status_of(GroupTarget("bad", "g:consume"), R"({"color":"red"})"), 400);
  EXPECT_EQ(status_of(GroupTarget("bad", "g:commit"), R"({"token":1})"), 400);
  EXPECT_EQ(status_of(GroupTarget("bad", "bad group:consume"), "{}"), 400);
  ASSERT_OK_AND_ASSIGN(client::ClientResponse get_action,
                       http_->Get(GroupTarget("bad", "g:consume")));
  EXPECT_EQ(get_action.status, 405);
  ASSERT_OK_AND_ASSIGN(client::ClientResponse unknown, http_->Get(GroupTarget("bad", "nobody")));
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(ErrorCode(unknown), "not_found");
  // A group name with ':' — the action is what follows the last one.
  json::object page = PostOk(GroupTarget("bad", "team:billing:consume"), json::object{});
  EXPECT_THAT(Sequences(page), ElementsAre(1));
  ASSERT_OK_AND_ASSIGN(json::value info, GetJson(*http_, GroupTarget("bad", "team:billing")));
  EXPECT_EQ(info.at("group").as_string(), "team:billing");
}

TEST_F(GroupsApiTest, DeadLettersAreListedShownAndRepublishedOnce) {
  ASSERT_OK(Publish(*http_, "mail", "mail.send", R"({"to":"bob"})").status());
  ProcessOptions options;
  options.max_attempts = 2;
  options.sleep = [](absl::Duration) { return true; };
  ASSERT_OK(ProcessOnce(daemon_.bus(), "mail", "sender",
                        [](const Event&) { return absl::InternalError("smtp down"); }, options)
                .status());

  const std::string letters = client::BuildTarget({"v1", "streams", "mail", "dead-letters"});
  ASSERT_OK_AND_ASSIGN(json::value list, GetJson(*http_, letters));
  ASSERT_EQ(list.at("deadLetters").as_array().size(), 1u);
  const json::value& letter = list.at("deadLetters").as_array()[0];
  EXPECT_EQ(letter.at("sourceStream").as_string(), "mail");
  EXPECT_EQ(letter.at("sourceSequence").to_number<uint64_t>(), 1u);
  EXPECT_EQ(letter.at("group").as_string(), "sender");
  EXPECT_EQ(letter.at("reason").as_string(), "smtp down");
  EXPECT_EQ(letter.at("attempts").to_number<int>(), 2);
  EXPECT_EQ(letter.at("event").at("data").at("to").as_string(), "bob");
  ASSERT_OK_AND_ASSIGN(json::value shown,
                       GetJson(*http_, client::BuildTarget(
                                           {"v1", "streams", "mail", "dead-letters", "1"})));
  EXPECT_EQ(shown.at("cursor"), letter.at("cursor"));

  const std::string republish =
      client::BuildTarget({"v1", "streams", "mail", "dead-letters", "1:republish"});
  ASSERT_OK_AND_ASSIGN(client::ClientResponse first, http_->PostJson(republish, ""));
  ASSERT_EQ(first.status, 201) << first.body;
  EXPECT_FALSE(json::parse(first.body).at("duplicate").as_bool());
  ASSERT_OK_AND_ASSIGN(client::ClientResponse second, http_->PostJson(republish, ""));
  EXPECT_TRUE(json::parse(second.body).at("duplicate").as_bool());
  ASSERT_OK_AND_ASSIGN(std::vector<json::object> events, ReplayAll(*http_, "mail"));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].at("data").at("to").as_string(), "bob");
  EXPECT_EQ(events[1].at("attributes").at("keel.republished_from"), letter.at("cursor"));

  ASSERT_OK_AND_ASSIGN(client::ClientResponse missing,
                       http_->Get(client::BuildTarget(
                           {"v1", "streams", "mail", "dead-letters", "9"})));
  EXPECT_EQ(missing.status, 404);
}

TEST_F(GroupsApiTest, MetricsReportLagPerGroup) {
  PublishN("metered", 3);
  json::object page = Consume("metered", "g", 1, 60'000);
  PostOk(GroupTarget("metered", "g:commit"),
         json::object{{"cursor", page.at("lease").at("to")}, {"token", page.at("lease").at("token")}});
  ASSERT_OK_AND_ASSIGN(client::ClientResponse metrics, http_->Get("/metrics"));
  EXPECT_THAT(metrics.body, HasSubstr("# TYPE keel_group_lag gauge"));
  EXPECT_THAT(metrics.body, HasSubstr("keel_group_lag{stream=\"metered\",group=\"g\"} 2\n"));
}

TEST_F(GroupsApiTest, CursorAndTokensSurviveADaemonRestart) {
  PublishN("kept", 3);
  json::object page = Consume("kept", "g", 2, 60'000);
  const json::value token = page.at("lease").at("token");
  PostOk(GroupTarget("kept", "g:commit"),
         json::object{{"cursor", page.at("lease").at("to")}, {"token", token}});
  ASSERT_OK(daemon_.Restart());
  http_ = daemon_.NewClient();
  ASSERT_OK_AND_ASSIGN(json::value info, GetJson(*http_, GroupTarget("kept", "g")));
  EXPECT_EQ(info.at("committedSequence").to_number<uint64_t>(), 2u);
  json::object after = Consume("kept", "g", 10, 60'000);
  EXPECT_THAT(Sequences(after), ElementsAre(3));
  EXPECT_GT(after.at("lease").at("token").to_number<uint64_t>(), token.to_number<uint64_t>());
}

}  // namespace
}  // namespace keel::daemon_test
