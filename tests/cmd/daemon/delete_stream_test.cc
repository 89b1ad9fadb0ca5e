// DELETE /v1/streams/{s}: the stream, its groups and dead letters go for
// good, across a restart; the stream's old cursors are mismatches against
// the stream published under that name afterwards.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

using ::testing::HasSubstr;

class DeleteStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(daemon_.Start());
    http_ = daemon_.NewClient();
  }

  absl::StatusOr<client::ClientResponse> Delete(const std::string& stream) {
    return http_->Request("DELETE", client::BuildTarget({"v1", "streams", stream}), "", {});
  }

  absl::StatusOr<client::ClientResponse> ReplayAfter(const std::string& stream,
                                                     const std::string& cursor) {
    return http_->Request(
        "GET", client::BuildTarget({"v1", "streams", stream, "events"}, {{"after", cursor}}), "",
        {});
  }

  InProcessDaemon daemon_;
  std::unique_ptr<client::HttpClient> http_;
};

TEST_F(DeleteStreamTest, DeletedStreamStaysGoneAcrossARestart) {
  ASSERT_OK(Publish(*http_, "orders", "order.created", R"({"n":1})").status());
  ASSERT_OK_AND_ASSIGN(PublishedEvent old, Publish(*http_, "orders", "order.created", "{}"));
  ASSERT_OK(Publish(*http_, "orders.dlq", "order.failed", "{}").status());

  ASSERT_OK_AND_ASSIGN(client::ClientResponse deleted, Delete("orders"));
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  ASSERT_OK_AND_ASSIGN(json::value report, GetJson(*http_, "/v1/streams"));
  EXPECT_TRUE(report.at("streams").as_array().empty()) << json::serialize(report);
  EXPECT_THAT(deleted.body, HasSubstr(R"("deleted":["orders","orders.dlq"])"));
  EXPECT_THAT(deleted.body, HasSubstr(R"("events":3)"));

  ASSERT_OK(daemon_.Restart());
  http_ = daemon_.NewClient();
  ASSERT_OK_AND_ASSIGN(json::value listed, GetJson(*http_, "/v1/streams"));
  EXPECT_TRUE(listed.at("streams").as_array().empty()) << json::serialize(listed);
  ASSERT_OK_AND_ASSIGN(PublishedEvent fresh, Publish(*http_, "orders", "order.created", "{}"));
  EXPECT_GT(fresh.sequence, old.sequence);
  ASSERT_OK_AND_ASSIGN(client::ClientResponse stale, ReplayAfter("orders", old.cursor));
  EXPECT_EQ(stale.status, 409) << stale.body;
  EXPECT_EQ(ErrorCode(stale), "cursor_mismatch");
  ASSERT_OK_AND_ASSIGN(std::vector<json::object> events, ReplayAll(*http_, "orders"));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].at("sequence").to_number<uint64_t>(), fresh.sequence);
}

TEST_F(DeleteStreamTest, UnknownStreamIsNotFound) {
  ASSERT_OK_AND_ASSIGN(client::ClientResponse missing, Delete("never"));
  EXPECT_EQ(missing.status, 404) << missing.body;
  EXPECT_EQ(ErrorCode(missing), "not_found");
}

}  // namespace
}  // namespace keel::daemon_test
