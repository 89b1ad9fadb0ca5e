// Push delivery end to end over real sockets: a daemon (PushDaemon) POSTs
// to TestReceivers on 127.0.0.1 that fail, time out, throttle, reject or
// acknowledge, and the tests check what reached them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "keel/tests/push/delivery_fixture.h"

namespace keel::push_test {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

// 500, then a timeout, then 429 with Retry-After, then success: the batch
// goes out four times with the same events and attempts 1..4, later
// batches once each, and every event of both streams arrives in order —
// including those of streams created after the subscription.
TEST_F(PushDeliveryTest, RetriesThroughFailuresTimeoutsAndThrottlingThenDeliversInOrder) {
  TestReceiver receiver([](const ReceivedRequest&, int index) {
    if (index == 0) return Reply{500};
    if (index == 1) return Reply{503, {}, absl::Seconds(2)};  // Past the 300ms timeout.
    if (index == 2) return Reply{429, {{"Retry-After", "1"}}};
    return Reply{200};
  });
  Create(FastRetryDeclaration("orders-hook", "orders.*", receiver.url()));
  for (int i = 1; i <= 20; ++i) {
    ASSERT_TRUE(PublishN(*http_, i % 2 ? "orders.a" : "orders.b", "order.created", i).ok());
  }
  ASSERT_TRUE(receiver.WaitFor(
      [](const std::vector<ReceivedRequest>& r) { return Acknowledged(r).size() >= 20; }, kWait));

  const std::vector<ReceivedRequest> requests = receiver.requests();
  ASSERT_GE(requests.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(requests[i].Header("keel-delivery-attempt"), absl::StrCat(i + 1));
    EXPECT_EQ(requests[i].Header("keel-event-ids"), requests[0].Header("keel-event-ids"));
    EXPECT_EQ(requests[i].body, requests[0].body);
    EXPECT_EQ(requests[i].Header("keel-subscription"), "orders-hook");
  }
  // Retry-After: 1 held the fourth attempt back at least that long.
  EXPECT_GE(requests[3].arrived - requests[2].arrived, absl::Milliseconds(900));
  for (size_t i = 4; i < requests.size(); ++i) {
    EXPECT_EQ(requests[i].Header("keel-delivery-attempt"), "1");
  }
  const std::vector<Delivered> acknowledged = Acknowledged(requests);
  EXPECT_THAT(SequencesOf(acknowledged, "orders.a"), ElementsAreArray(OneTo(10)));
  EXPECT_THAT(SequencesOf(acknowledged, "orders.b"), ElementsAreArray(OneTo(10)));
  for (const ReceivedRequest& request : requests) {
    std::vector<Delivered> events = EventsOf(request);
    std::string ids;
    for (const Delivered& event : events) absl::StrAppend(&ids, ids.empty() ? "" : ",", event.id);
    EXPECT_EQ(request.Header("keel-event-ids"), ids);
    EXPECT_EQ(request.Header("keel-stream"), events.front().stream);
  }

  const json::object status = Describe("orders-hook");
  EXPECT_EQ(status.at("lag").to_number<int>(), 0);
  const json::object& delivery = status.at("delivery").as_object();
  EXPECT_EQ(delivery.at("failures").to_number<int>(), 3);
  EXPECT_EQ(delivery.at("retries").to_number<int>(), 3);
  EXPECT_EQ(delivery.at("eventsDelivered").to_number<int>(), 20);
  EXPECT_EQ(delivery.at("deadLetters").to_number<int>(), 0);
}

// A 400 moves the batch's events to the subscription's dead-letter stream
// with the reason, the status and the attempt count; delivery continues
// with the next events.
TEST_F(PushDeliveryTest, RejectedEventsBecomeDeadLettersAndDeliveryMovesOn) {
  TestReceiver receiver([](const ReceivedRequest& request, int) {
    return absl::StrContains(request.body, "order.poison") ? Reply{400} : Reply{200};
  });
  json::object declaration = FastRetryDeclaration("strict", "orders", receiver.url());
  declaration["batchSize"] = 1;
  Create(declaration);
  ASSERT_TRUE(PublishN(*http_, "orders", "order.created", 1).ok());
  absl::StatusOr<std::string> poison = PublishN(*http_, "orders", "order.poison", 2);
  ASSERT_TRUE(poison.ok());
  ASSERT_TRUE(PublishN(*http_, "orders", "order.created", 3).ok());
  ASSERT_TRUE(receiver.WaitFor(
      [](const std::vector<ReceivedRequest>& r) { return Acknowledged(r).size() >= 2; }, kWait));
  std::vector<int> delivered;
  for (const Delivered& event : Acknowledged(receiver.requests())) delivered.push_back(event.n);
  EXPECT_THAT(delivered, ElementsAre(1, 3));

  absl::StatusOr<client::ClientResponse> letters =
      http_->Get("/v1/streams/push.strict/dead-letters");
  ASSERT_TRUE(letters.ok() && letters->status == 200) << letters->body;
  const json::value answer = json::parse(letters->body);
  const json::array& list = answer.at("deadLetters").as_array();
  ASSERT_EQ(list.size(), 1u);
  const json::object& letter = list[0].as_object();
  EXPECT_EQ(letter.at("sourceStream").as_string(), "orders");
  EXPECT_EQ(letter.at("sourceSequence").to_number<int>(), 2);
  EXPECT_EQ(letter.at("sourceId").as_string(), *poison);
  EXPECT_EQ(letter.at("group").as_string(), "push.strict");
  EXPECT_EQ(letter.at("attempts").to_number<int>(), 1);
  EXPECT_TRUE(absl::StartsWith(std::string(letter.at("reason").as_string()), "HTTP 400"));
  EXPECT_EQ(letter.at("event").at("attributes").at("keel.push.status").as_string(), "400");
  EXPECT_EQ(Describe("strict").at("delivery").at("deadLetters").to_number<int>(), 1);
}

// Retries run out: the events are dead-lettered after max attempts.
TEST_F(PushDeliveryTest, ExhaustedRetriesBecomeDeadLetters) {
  TestReceiver receiver([](const ReceivedRequest& request, int) {
    return absl::StrContains(request.body, "order.flaky") ? Reply{503} : Reply{200};
  });
  json::object declaration = FastRetryDeclaration("patient", "orders", receiver.url());
  declaration["batchSize"] = 1;
  declaration["retry"].as_object()["maxAttempts"] = 3;
  Create(declaration);
  ASSERT_TRUE(PublishN(*http_, "orders", "order.flaky", 1).ok());
  ASSERT_TRUE(PublishN(*http_, "orders", "order.created", 2).ok());
  ASSERT_TRUE(receiver.WaitFor(
      [](const std::vector<ReceivedRequest>& r) { return Acknowledged(r).size() >= 1; }, kWait));
  const std::vector<ReceivedRequest> requests = receiver.requests();
  ASSERT_EQ(requests.size(), 4u);  // Three attempts of event 1, one of event 2.
  absl::StatusOr<client::ClientResponse> letters =
      http_->Get("/v1/streams/push.patient/dead-letters");
  ASSERT_TRUE(letters.ok() && letters->status == 200);
  const json::value answer = json::parse(letters->body);
  const json::array& list = answer.at("deadLetters").as_array();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].at("attempts").to_number<int>(), 3);
  EXPECT_EQ(list[0].at("event").at("attributes").at("keel.push.status").as_string(), "503");
}

// deadLetterRetention is the retention of the subscription's dead letters:
// past it the oldest go, at the daemon's next trim; a declaration of the
// stream that disagrees is drift, and nothing is created.
TEST_F(PushDeliveryTest, DeadLetterRetentionBoundsTheDeadLetterStream) {
  TestReceiver receiver([](const ReceivedRequest&, int) { return Reply{400}; });
  json::object declaration = FastRetryDeclaration("kept", "orders", receiver.url());
  declaration["batchSize"] = 1;
  json::object retention;
  retention["maxEvents"] = 2;
  declaration["deadLetterRetention"] = retention;
  Create(declaration);
  EXPECT_EQ(Describe("kept").at("deadLetterRetention").at("maxEvents").to_number<int>(), 2);
  for (int i = 1; i <= 5; ++i) ASSERT_TRUE(PublishN(*http_, "orders", "order.created", i).ok());
  ASSERT_TRUE(DescribeUntil("kept", [](const json::object& status) {
    return status.at("delivery").at("deadLetters").to_number<int>() == 5;
  }));
  ASSERT_TRUE(daemon_.bus().Trim(1000).ok());
  absl::StatusOr<client::ClientResponse> letters = http_->Get("/v1/streams/push.kept/dead-letters");
  ASSERT_TRUE(letters.ok() && letters->status == 200);
  const json::value answer = json::parse(letters->body);
  const json::array& list = answer.at("deadLetters").as_array();
  ASSERT_EQ(list.size(), 2u);  // The newest two.
  EXPECT_EQ(list[0].at("sourceSequence").to_number<int>(), 4);
  EXPECT_EQ(list[1].at("sourceSequence").to_number<int>(), 5);

  json::object other = FastRetryDeclaration("other", "orders", receiver.url());
  json::object conflicting;
  conflicting["maxEvents"] = 3;
  other["deadLetterRetention"] = conflicting;
  json::object policy;
  json::object declared;
  declared["maxEvents"] = 10;
  policy["deadLetterRetention"] = declared;
  absl::StatusOr<client::ClientResponse> put =
      http_->Request("PUT", "/v1/streams/push.other", json::serialize(policy),
                     {{"Content-Type", "application/json"}});
  ASSERT_TRUE(put.ok() && put->status / 100 == 2) << (put.ok() ? put->body : "");
  absl::StatusOr<client::ClientResponse> drift = CreateSubscription(*http_, other);
  ASSERT_TRUE(drift.ok());
  EXPECT_EQ(drift->status, 409) << drift->body;
  EXPECT_TRUE(absl::StrContains(drift->body, "deadLetterRetention")) << drift->body;
  EXPECT_EQ(http_->Get("/v1/subscriptions/other")->status, 404);
}

// Endpoints by name: "localhost" is looked up and delivered to; a name
// that does not resolve (.invalid never does) fails as "no answer" within
// the POST's timeout, however the system's resolver behaves, and is retried.
TEST_F(PushDeliveryTest, NamesAreResolvedWithinTheTimeout) {
  TestReceiver receiver([](const ReceivedRequest&, int) { return Reply{200}; });
  Create(FastRetryDeclaration("named", "orders",
                              absl::StrCat("http://localhost:", receiver.port(), "/hook")));
  Create(FastRetryDeclaration("nowhere", "orders", "http://keel-test.invalid:9/hook"));
  ASSERT_TRUE(PublishN(*http_, "orders", "order.created", 1).ok());
  ASSERT_TRUE(receiver.WaitFor(
      [](const std::vector<ReceivedRequest>& r) { return Acknowledged(r).size() >= 1; }, kWait));
  ASSERT_TRUE(DescribeUntil("nowhere", [](const json::object& status) {
    return status.at("delivery").at("failures").to_number<int>() >= 2;
  }));
  const std::string error(Describe("nowhere").at("delivery").at("lastError").as_string());
  EXPECT_TRUE(absl::StartsWith(error, "no answer: cannot resolve keel-test.invalid:9")) << error;
}

// A restart in the middle of delivery resumes after the last acknowledged
// batch: every event arrives, in order, and only an unacknowledged batch
// may arrive twice.
TEST_F(PushDeliveryTest, RestartResumesWhereDeliveryStopped) {
  std::atomic<bool> hold{true};
  TestReceiver receiver([&hold](const ReceivedRequest&, int index) {
    // The third batch hangs (past the timeout) until the restart.
    if (index >= 2 && hold.load()) return Reply{503, {}, absl::Seconds(1)};
    return Reply{200};
  });
  json::object declaration = FastRetryDeclaration("resumer", "orders", receiver.url());
  declaration["batchSize"] = 5;
  for (int i = 1; i <= 30; ++i) ASSERT_TRUE(PublishN(*http_, "orders", "order.created", i).ok());
  Create(declaration);
  ASSERT_TRUE(
      receiver.WaitFor([](const std::vector<ReceivedRequest>& r) { return r.size() >= 3; }, kWait));
  daemon_.Stop();
  const size_t before = receiver.requests().size();
  const std::vector<uint64_t> acknowledged_before =
      SequencesOf(Acknowledged(receiver.requests()), "orders");
  ASSERT_THAT(acknowledged_before, ElementsAreArray(OneTo(10)));
  hold = false;
  ASSERT_TRUE(daemon_.Start().ok());
  ASSERT_TRUE(receiver.WaitFor(
      [](const std::vector<ReceivedRequest>& r) { return Acknowledged(r).size() >= 30; }, kWait));
  // After the restart the first request starts right after the last
  // acknowledged event: nothing skipped, nothing acknowledged repeated.
  const std::vector<ReceivedRequest> requests = receiver.requests();
  ASSERT_GT(requests.size(), before);
  EXPECT_EQ(EventsOf(requests[before]).front().sequence, 11u);
  EXPECT_THAT(SequencesOf(Acknowledged(requests), "orders"), ElementsAreArray(OneTo(30)));
}

// A subscription whose endpoint hangs does not hold up another's deliveries
// or publishing.
TEST_F(PushDeliveryTest, SlowEndpointDelaysNoOtherSubscription) {
  TestReceiver slow([](const ReceivedRequest&, int) { return Reply{200, {}, absl::Seconds(30)}; });
  TestReceiver fast([](const ReceivedRequest&, int) { return Reply{200}; });
  json::object slow_declaration = FastRetryDeclaration("slow", "orders", slow.url());
  slow_declaration["timeoutMs"] = 60000;
  Create(slow_declaration);
  Create(FastRetryDeclaration("fast", "orders", fast.url()));
  for (int i = 1; i <= 10; ++i) ASSERT_TRUE(PublishN(*http_, "orders", "order.created", i).ok());
  ASSERT_TRUE(fast.WaitFor(
      [](const std::vector<ReceivedRequest>& r) { return Acknowledged(r).size() >= 10; }, kWait));
  EXPECT_THAT(SequencesOf(Acknowledged(fast.requests()), "orders"), ElementsAreArray(OneTo(10)));
  // The slow one is still waiting on its first answer.
  EXPECT_EQ(Describe("slow").at("delivery").at("deliveries").to_number<int>(), 0);
  // The receivers close before the daemon stops, which ends the slow POST.
}

}  // namespace
}  // namespace keel::push_test
