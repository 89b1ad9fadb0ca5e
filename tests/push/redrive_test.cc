// Redrive over real sockets: events a receiver rejected become dead
// letters; a redrive while it still rejects stops at the first and loses
// nothing; once it is fixed, a redrive sends each dead letter once, as its
// original event; a second redrive sends nothing, and one with a range
// sends that range again.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>

#include "absl/strings/match.h"
#include "keel/tests/push/delivery_fixture.h"

namespace keel::push_test {
namespace {

using ::testing::ElementsAre;

class PushRedriveTest : public PushDeliveryTest {
 protected:
  json::object Redrive(const std::string& name, const std::string& body) {
    absl::StatusOr<client::ClientResponse> response =
        http_->PostJson("/v1/subscriptions/" + name + ":redrive", body);
    EXPECT_TRUE(response.ok() && response->status == 200)
        << (response.ok() ? response->body : response.status().ToString());
    if (!response.ok() || response->status != 200) return {};
    return json::parse(response->body).as_object();
  }

  static std::string RedriveState(const json::object& status) {
    const json::value* redrive = status.if_contains("redrive");
    return redrive == nullptr ? "" : std::string(redrive->at("state").as_string());
  }

  // data.n of every event the receiver acknowledged, in order.
  static std::vector<int> AcknowledgedNs(const TestReceiver& receiver) {
    std::vector<int> out;
    for (const Delivered& event : Acknowledged(receiver.requests())) out.push_back(event.n);
    return out;
  }

  static bool AcknowledgedAtLeast(const TestReceiver& receiver, size_t n) {
    return receiver.WaitFor(
        [n](const std::vector<ReceivedRequest>& r) { return Acknowledged(r).size() >= n; }, kWait);
  }
};

TEST_F(PushRedriveTest, RedriveAfterTheFixDeliversEachDeadLetterOnce) {
  std::atomic<bool> fixed{false};
  TestReceiver receiver([&fixed](const ReceivedRequest& request, int) {
    return !fixed && absl::StrContains(request.body, "order.poison") ? Reply{400} : Reply{200};
  });
  json::object declaration = FastRetryDeclaration("fixable", "orders", receiver.url());
  declaration["batchSize"] = 1;
  Create(declaration);
  ASSERT_TRUE(PublishN(*http_, "orders", "order.created", 1).ok());
  absl::StatusOr<std::string> first_poison = PublishN(*http_, "orders", "order.poison", 2);
  absl::StatusOr<std::string> second_poison = PublishN(*http_, "orders", "order.poison", 3);
  ASSERT_TRUE(first_poison.ok() && second_poison.ok());
  ASSERT_TRUE(PublishN(*http_, "orders", "order.created", 4).ok());
  // Event 4 is sent after events 2 and 3 were dead-lettered.
  ASSERT_TRUE(AcknowledgedAtLeast(receiver, 2));
  ASSERT_THAT(AcknowledgedNs(receiver), ElementsAre(1, 4));
  EXPECT_EQ(Describe("fixable").at("delivery").at("deadLetters").to_number<int>(), 2);

  // Still rejected: the redrive stops at the first letter, dead-letters
  // nothing again, and says why.
  Redrive("fixable", "");
  ASSERT_TRUE(
      DescribeUntil("fixable", [](const json::object& s) { return RedriveState(s) == "failed"; }));
  json::object status = Describe("fixable");
  const json::object& failed = status.at("redrive").as_object();
  EXPECT_EQ(failed.at("until").to_number<int>(), 2);
  EXPECT_EQ(failed.at("cursor").to_number<int>(), 0);
  EXPECT_EQ(failed.at("remaining").to_number<int>(), 2);
  EXPECT_TRUE(absl::StartsWith(std::string(failed.at("lastError").as_string()), "HTTP 400"));
  EXPECT_EQ(status.at("delivery").at("deadLetters").to_number<int>(), 2);

  // Fixed: both arrive once, as the events they were.
  fixed = true;
  Redrive("fixable", "");
  ASSERT_TRUE(
      DescribeUntil("fixable", [](const json::object& s) { return RedriveState(s) == "done"; }));
  ASSERT_TRUE(AcknowledgedAtLeast(receiver, 4));
  const std::vector<Delivered> acknowledged = Acknowledged(receiver.requests());
  ASSERT_EQ(acknowledged.size(), 4u);
  EXPECT_EQ(acknowledged[2].stream, "orders");
  EXPECT_EQ(acknowledged[2].sequence, 2u);
  EXPECT_EQ(acknowledged[2].id, *first_poison);
  EXPECT_EQ(acknowledged[3].sequence, 3u);
  EXPECT_EQ(acknowledged[3].id, *second_poison);
  EXPECT_EQ(Describe("fixable").at("redrive").at("redriven").to_number<int>(), 2);

  // Again: nothing more. Each pass of the worker sends a live batch before
  // a redrive batch, so once events 5 and 6 are acknowledged, two redrive
  // steps ran and sent nothing.
  Redrive("fixable", "");
  ASSERT_TRUE(PublishN(*http_, "orders", "order.created", 5).ok());
  ASSERT_TRUE(AcknowledgedAtLeast(receiver, 5));
  ASSERT_TRUE(PublishN(*http_, "orders", "order.created", 6).ok());
  ASSERT_TRUE(AcknowledgedAtLeast(receiver, 6));
  EXPECT_THAT(AcknowledgedNs(receiver), ElementsAre(1, 4, 2, 3, 5, 6));

  // A range sends exactly that range again: dead letter 2 is event 3.
  Redrive("fixable", R"({"fromSequence":2,"toSequence":2})");
  ASSERT_TRUE(AcknowledgedAtLeast(receiver, 7));
  ASSERT_TRUE(DescribeUntil("fixable", [](const json::object& s) {
    return RedriveState(s) == "done" && s.at("redrive").at("redriven").to_number<int>() == 3;
  }));
  EXPECT_THAT(AcknowledgedNs(receiver), ElementsAre(1, 4, 2, 3, 5, 6, 3));
}

// A redrive is recorded: a daemon restarted in the middle of one
// continues it.
TEST_F(PushRedriveTest, RestartContinuesARedrive) {
  enum Phase { kRejecting, kHanging, kFixed };
  std::atomic<int> phase{kRejecting};
  TestReceiver receiver([&phase](const ReceivedRequest& request, int) {
    if (!absl::StrContains(request.body, "order.poison")) return Reply{200};
    switch (phase.load()) {
      case kRejecting:
        return Reply{400};
      case kHanging:  // Past the 300 ms timeout: no answer, retried.
        return Reply{503, {}, absl::Seconds(1)};
      default:
        return Reply{200};
    }
  });
  json::object declaration = FastRetryDeclaration("restarted", "orders", receiver.url());
  declaration["batchSize"] = 1;
  Create(declaration);
  for (int n = 1; n <= 3; ++n) ASSERT_TRUE(PublishN(*http_, "orders", "order.poison", n).ok());
  ASSERT_TRUE(DescribeUntil("restarted", [](const json::object& s) {
    return s.at("delivery").at("deadLetters").to_number<int>() == 3;
  }));
  phase = kHanging;
  Redrive("restarted", "");
  ASSERT_TRUE(receiver.WaitFor(
      [](const std::vector<ReceivedRequest>& r) { return r.back().answered == 503; }, kWait));
  daemon_.Stop();
  ASSERT_TRUE(Acknowledged(receiver.requests()).empty());
  phase = kFixed;
  ASSERT_TRUE(daemon_.Start().ok());
  ASSERT_TRUE(AcknowledgedAtLeast(receiver, 3));
  EXPECT_THAT(AcknowledgedNs(receiver), ElementsAre(1, 2, 3));
}

}  // namespace
}  // namespace keel::push_test
