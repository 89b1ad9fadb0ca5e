// The circuit breaker end to end: an endpoint that stops answering gets
// probes, not retries, until it is back; then every event arrives, in
// order, none dead-lettered, and the circuit shows in the subscription's
// status and in /metrics.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>

#include "absl/strings/str_cat.h"
#include "keel/tests/push/delivery_fixture.h"

namespace keel::push_test {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr absl::Duration kOpenFor = absl::Milliseconds(400);

TEST_F(PushDeliveryTest, OpenCircuitHoldsRetriesBackUntilTheEndpointIsBack) {
  std::atomic<bool> down{true};
  TestReceiver receiver(
      [&down](const ReceivedRequest&, int) { return down.load() ? Reply{503} : Reply{200}; });
  json::object declaration = FastRetryDeclaration("guarded", "orders", receiver.url());
  declaration["batchSize"] = 5;
  declaration["retry"].as_object()["maxAttempts"] = 100;
  json::object circuit;
  circuit["failureThreshold"] = 3;
  circuit["openMs"] = absl::ToInt64Milliseconds(kOpenFor);
  declaration["circuit"] = std::move(circuit);
  Create(declaration);
  for (int i = 1; i <= 12; ++i) ASSERT_TRUE(PublishN(*http_, "orders", "order.created", i).ok());

  ASSERT_TRUE(DescribeUntil("guarded", [](const json::object& status) {
    return status.at("circuitState").at("opens").to_number<int>() >= 1;
  }));
  absl::StatusOr<client::ClientResponse> metrics = http_->Get("/metrics");
  ASSERT_TRUE(metrics.ok() && metrics->status == 200);
  EXPECT_THAT(metrics->body, HasSubstr("keel_push_circuit_open{subscription=\"guarded\"} 1"));

  // Open, the circuit lets a probe through per kOpenFor at most; retries
  // 10-50 ms apart would have sent dozens of POSTs in this time.
  const size_t before = receiver.requests().size();
  const absl::Duration watched = 5 * kOpenFor;
  absl::SleepFor(watched);
  EXPECT_LE(receiver.requests().size() - before, 6u);

  down = false;
  ASSERT_TRUE(receiver.WaitFor(
      [](const std::vector<ReceivedRequest>& r) { return Acknowledged(r).size() >= 12; }, kWait));
  EXPECT_THAT(SequencesOf(Acknowledged(receiver.requests()), "orders"),
              ElementsAreArray(OneTo(12)));
  ASSERT_TRUE(DescribeUntil("guarded", [](const json::object& status) {
    return status.at("circuitState").at("state").as_string() == "closed" &&
           status.at("delivery").at("eventsDelivered").to_number<int>() == 12;
  }));
  const json::object status = Describe("guarded");
  EXPECT_EQ(status.at("delivery").at("deadLetters").to_number<int>(), 0);

  metrics = http_->Get("/metrics");
  ASSERT_TRUE(metrics.ok() && metrics->status == 200);
  EXPECT_THAT(metrics->body, HasSubstr("keel_push_circuit_open{subscription=\"guarded\"} 0"));
  EXPECT_THAT(metrics->body, HasSubstr("# TYPE keel_push_endpoint_latency_seconds histogram"));
  // Every answered POST is in the +Inf bucket: as many as the count.
  const int answered = static_cast<int>(receiver.requests().size());
  EXPECT_THAT(metrics->body,
              HasSubstr(absl::StrCat("keel_push_endpoint_latency_seconds_bucket{subscription="
                                     "\"guarded\",le=\"+Inf\"} ",
                                     answered)));
  EXPECT_THAT(
      metrics->body,
      HasSubstr(absl::StrCat("keel_push_endpoint_latency_seconds_count{subscription=\"guarded\"} ",
                             answered)));
}

}  // namespace
}  // namespace keel::push_test
