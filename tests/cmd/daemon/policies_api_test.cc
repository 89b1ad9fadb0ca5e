// Stream policies over HTTP: PUT declarations (no-op, drift, across a
// restart), expectedLastSequence (body and header), partitioned topics,
// after_time, idempotency across a restart, and the daemon's retention
// trimmer with its metrics.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "keel/core/status_macros.h"
#include "keel/core/topic.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

using ::testing::HasSubstr;

class PoliciesApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(daemon_.Start());
    http_ = daemon_.NewClient();
  }

  absl::StatusOr<client::ClientResponse> Put(const std::string& stream, const std::string& body) {
    return http_->Request("PUT", client::BuildTarget({"v1", "streams", stream}), body,
                          {{"Content-Type", "application/json"}});
  }

  absl::StatusOr<json::object> Stream(const std::string& stream) {
    KEEL_ASSIGN_OR_RETURN(json::value value,
                          GetJson(*http_, client::BuildTarget({"v1", "streams", stream})));
    return value.as_object();
  }

  InProcessDaemon daemon_;
  std::unique_ptr<client::HttpClient> http_;
};

TEST_F(PoliciesApiTest, DeclarationsAreIdempotentRefuseDriftAndSurviveARestart) {
  const std::string policy = R"({"retention":{"maxEvents":100},"dedupeWindow":"5m"})";
  ASSERT_OK_AND_ASSIGN(auto first, Put("orders", policy));
  ASSERT_EQ(first.status, 200) << first.body;
  ASSERT_OK_AND_ASSIGN(auto again, Put("orders", policy));
  EXPECT_EQ(again.status, 200) << again.body;
  ASSERT_OK_AND_ASSIGN(json::object shown, Stream("orders"));
  EXPECT_EQ(shown.at("policy").at("retention").at("maxEvents").to_number<uint64_t>(), 100u);
  EXPECT_EQ(shown.at("policy").at("dedupeWindow").as_string(), "5m");

  ASSERT_OK(daemon_.Restart());
  http_ = daemon_.NewClient();
  ASSERT_OK_AND_ASSIGN(auto drift,
                       Put("orders", R"({"retention":{"maxEvents":200},"dedupeWindow":"5m"})"));
  EXPECT_EQ(drift.status, 409);
  EXPECT_EQ(ErrorCode(drift), "resource_drift");
  EXPECT_THAT(drift.body, HasSubstr("max_events"));
  ASSERT_OK_AND_ASSIGN(auto same, Put("orders", policy));
  EXPECT_EQ(same.status, 200) << same.body;
}

TEST_F(PoliciesApiTest, BadDeclarationsAreRejected) {
  ASSERT_OK_AND_ASSIGN(auto unknown, Put("s", R"({"retention":{"maxEvent":1}})"));
  EXPECT_EQ(unknown.status, 400);
  EXPECT_THAT(unknown.body, HasSubstr("retention.maxEvent"));
  ASSERT_OK_AND_ASSIGN(auto bad_duration, Put("s", R"({"dedupeWindow":"soon"})"));
  EXPECT_EQ(bad_duration.status, 400);
  ASSERT_OK_AND_ASSIGN(auto not_json, Put("s", "max_events=1"));
  EXPECT_EQ(not_json.status, 400);
  ASSERT_OK_AND_ASSIGN(json::object untouched, Stream("s"));
  EXPECT_EQ(untouched.at("policy").at("retention").at("maxEvents").to_number<uint64_t>(), 0u);
}

TEST_F(PoliciesApiTest, ExpectedLastSequenceFromTheBodyOrTheHeader) {
  ASSERT_OK_AND_ASSIGN(auto first,
                       PostEvents(*http_, "occ", R"({"type":"t","data":1,"expectedLastSequence":0})"));
  ASSERT_EQ(first.status, 201) << first.body;
  ASSERT_OK_AND_ASSIGN(auto stale,
                       PostEvents(*http_, "occ", R"({"type":"t","data":2,"expectedLastSequence":0})"));
  EXPECT_EQ(stale.status, 409);
  EXPECT_EQ(ErrorCode(stale), "conflict");
  json::object error = json::parse(stale.body).at("error").as_object();
  EXPECT_EQ(error.at("expected").to_number<uint64_t>(), 0u);
  EXPECT_EQ(error.at("actual").to_number<uint64_t>(), 1u);

  ASSERT_OK_AND_ASSIGN(auto batch, PostEvents(*http_, "occ", R"([{"type":"t"},{"type":"t"}])",
                                              {{"Keel-Expected-Last-Sequence", "1"}}));
  EXPECT_EQ(batch.status, 201) << batch.body;
  ASSERT_OK_AND_ASSIGN(auto stale_batch, PostEvents(*http_, "occ", R"([{"type":"t"}])",
                                                    {{"Keel-Expected-Last-Sequence", "1"}}));
  EXPECT_EQ(stale_batch.status, 409);
  ASSERT_OK_AND_ASSIGN(auto in_array,
                       PostEvents(*http_, "occ", R"([{"type":"t","expectedLastSequence":3}])"));
  EXPECT_EQ(in_array.status, 400);
  ASSERT_OK_AND_ASSIGN(json::object bounds, Stream("occ"));
  EXPECT_EQ(bounds.at("lastSequence").to_number<uint64_t>(), 3u);
}

TEST_F(PoliciesApiTest, TopicPublishesRouteByPartitionKeyAndReportPerEvent) {
  ASSERT_OK_AND_ASSIGN(auto declared, Put("clicks", R"({"partitions":4})"));
  ASSERT_EQ(declared.status, 200) << declared.body;
  const std::vector<std::string> keys = {"alice", "bob", "carol", "alice"};
  json::array batch;
  for (const std::string& key : keys) {
    batch.push_back(json::object{{"type", "click"}, {"partitionKey", key}, {"data", key}});
  }
  ASSERT_OK_AND_ASSIGN(auto response, PostEvents(*http_, "clicks", json::serialize(batch)));
  ASSERT_EQ(response.status, 201) << response.body;
  json::array receipts = json::parse(response.body).at("receipts").as_array();
  ASSERT_EQ(receipts.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(receipts[i].at("stream").as_string(),
              PartitionStream("clicks", PartitionOf(keys[i], 4)));
  }
  // Same key, same partition, in order.
  EXPECT_EQ(receipts[3].at("stream"), receipts[0].at("stream"));
  EXPECT_GT(receipts[3].at("sequence").to_number<uint64_t>(),
            receipts[0].at("sequence").to_number<uint64_t>());

  ASSERT_OK_AND_ASSIGN(auto no_key, PostEvents(*http_, "clicks", R"({"type":"click"})"));
  EXPECT_EQ(no_key.status, 400);
  ASSERT_OK_AND_ASSIGN(auto key_on_plain,
                       PostEvents(*http_, "plain", R"({"type":"t","partitionKey":"k"})"));
  EXPECT_EQ(key_on_plain.status, 400);
}

TEST_F(PoliciesApiTest, AFailingPartitionDoesNotFailTheOthers) {
  ASSERT_OK(Put("jobs", R"({"partitions":2,"maxPayloadBytes":2048})").status());
  // Find keys for both partitions.
  std::string key0, key1;
  for (int i = 0; key0.empty() || key1.empty(); ++i) {
    std::string key = absl::StrCat("k", i);
    (PartitionOf(key, 2) == 0 ? key0 : key1) = key;
  }
  json::array batch{json::object{{"type", "t"}, {"partitionKey", key0}, {"data", "small"}},
                    json::object{{"type", "t"},
                                 {"partitionKey", key1},
                                 {"data", std::string(4096, 'x')}}};
  ASSERT_OK_AND_ASSIGN(auto response, PostEvents(*http_, "jobs", json::serialize(batch)));
  ASSERT_EQ(response.status, 207) << response.body;
  json::array results = json::parse(response.body).at("receipts").as_array();
  EXPECT_EQ(results[0].at("stream").as_string(), "jobs:0");
  EXPECT_EQ(results[1].at("error").at("code").as_string(), "payload_too_large");
  ASSERT_OK_AND_ASSIGN(json::object kept, Stream("jobs:0"));
  EXPECT_EQ(kept.at("count").to_number<uint64_t>(), 1u);
  ASSERT_OK_AND_ASSIGN(json::object refused, Stream("jobs:1"));
  EXPECT_EQ(refused.at("count").to_number<uint64_t>(), 0u);
}

TEST_F(PoliciesApiTest, ReplayFromATime) {
  for (int i = 0; i < 3; ++i) ASSERT_OK(Publish(*http_, "timed", "t", absl::StrCat(i)).status());
  ASSERT_OK_AND_ASSIGN(json::value all, GetJson(*http_, "/v1/streams/timed/events?after=earliest"));
  const std::string second_time(all.at("events").at(1).at("time").as_string());
  ASSERT_OK_AND_ASSIGN(json::value from,
                       GetJson(*http_, client::BuildTarget({"v1", "streams", "timed", "events"},
                                                           {{"after_time", second_time}})));
  const json::array& events = from.at("events").as_array();
  ASSERT_FALSE(events.empty());
  // Events 2 and 3 may share a timestamp with event 2; none before it is returned.
  EXPECT_LE(events.front().at("sequence").to_number<uint64_t>(), 2u);
  EXPECT_EQ(events.back().at("sequence").to_number<uint64_t>(), 3u);
  for (const json::value& event : events) EXPECT_GE(event.at("time").as_string(), second_time);

  ASSERT_OK_AND_ASSIGN(auto bad, http_->Get("/v1/streams/timed/events?after_time=yesterday"));
  EXPECT_EQ(bad.status, 400);
  ASSERT_OK_AND_ASSIGN(auto both,
                       http_->Get(client::BuildTarget({"v1", "streams", "timed", "events"},
                                                      {{"after_time", second_time},
                                                       {"after", "earliest"}})));
  EXPECT_EQ(both.status, 400);
}

TEST_F(PoliciesApiTest, IdempotencyKeysSurviveADaemonRestart) {
  ASSERT_OK_AND_ASSIGN(auto first, PostEvents(*http_, "pay", R"({"type":"charge","data":1})",
                                              {{"Idempotency-Key", "charge-42"}}));
  ASSERT_EQ(first.status, 201);
  ASSERT_OK(daemon_.Restart());
  http_ = daemon_.NewClient();
  ASSERT_OK_AND_ASSIGN(auto retry, PostEvents(*http_, "pay", R"({"type":"charge","data":1})",
                                              {{"Idempotency-Key", "charge-42"}}));
  ASSERT_EQ(retry.status, 201);
  json::object original = json::parse(first.body).as_object();
  json::object again = json::parse(retry.body).as_object();
  EXPECT_TRUE(again.at("duplicate").as_bool());
  EXPECT_EQ(again.at("cursor"), original.at("cursor"));
}

TEST_F(PoliciesApiTest, TheTrimmerEnforcesRetentionAndReportsIt) {
  ASSERT_OK(Put("capped", R"({"retention":{"maxEvents":5}})").status());
  std::vector<PublishedEvent> published;
  for (int i = 0; i < 20; ++i) {
    ASSERT_OK_AND_ASSIGN(PublishedEvent event, Publish(*http_, "capped", "t", absl::StrCat(i)));
    published.push_back(event);
  }
  ASSERT_OK_AND_ASSIGN(json::object bounds, AwaitTrimmed(*http_, "capped", 16, kWait));
  EXPECT_EQ(bounds.at("count").to_number<uint64_t>(), 5u);
  EXPECT_EQ(bounds.at("firstSequence").to_number<uint64_t>(), 16u);

  ASSERT_OK_AND_ASSIGN(auto gap, http_->Get(client::BuildTarget(
                                     {"v1", "streams", "capped", "events"},
                                     {{"after", published[1].cursor}})));
  EXPECT_EQ(gap.status, 410);
  EXPECT_EQ(ErrorCode(gap), "retention_gap");
  ASSERT_OK_AND_ASSIGN(auto metrics, http_->Get("/metrics"));
  EXPECT_THAT(metrics.body, HasSubstr("keel_retention_trimmed_events_total 15\n"));
}

}  // namespace
}  // namespace keel::daemon_test
