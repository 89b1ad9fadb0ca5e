// The pieces of push delivery on their own: stream patterns, the retry
// delay, answer classification, declarations and their drift.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/push/endpoint_sender.h"
#include "keel/cmd/keel/server/push/endpoint_url.h"
#include "keel/cmd/keel/server/push/push_metrics.h"
#include "keel/cmd/keel/server/push/retry_delay.h"
#include "keel/cmd/keel/server/push/stream_pattern.h"
#include "keel/cmd/keel/server/push/subscription_json.h"

namespace keel::push {
namespace {

bool Matches(const char* pattern, const char* stream) {
  absl::StatusOr<StreamPattern> parsed = StreamPattern::Parse(pattern);
  EXPECT_TRUE(parsed.ok()) << pattern;
  return parsed->Matches(stream);
}

TEST(StreamPatternTest, ExactPrefixAndGlob) {
  EXPECT_TRUE(Matches("orders", "orders"));
  EXPECT_FALSE(Matches("orders", "orders.eu"));
  EXPECT_TRUE(Matches("orders.*", "orders.eu"));
  EXPECT_FALSE(Matches("orders.*", "orders"));
  EXPECT_TRUE(Matches("orders*", "orders"));
  EXPECT_TRUE(Matches("*.eu", "orders.eu"));
  EXPECT_FALSE(Matches("*.eu", "orders.us"));
  EXPECT_TRUE(Matches("o?ders.*.eu", "orders.shop.eu"));
  // Dead letters and the subscriptions' own records never match.
  EXPECT_FALSE(Matches("*", "orders.dlq"));
  EXPECT_FALSE(Matches("*", "keel.push.subscriptions"));
  EXPECT_FALSE(StreamPattern::Parse("orders/eu").ok());
  EXPECT_FALSE(StreamPattern::Parse("").ok());
}

TEST(RetryDelayTest, GrowsWithJitterUnderTheCapAndHonoursRetryAfter) {
  RetryPolicy policy;
  policy.initial_backoff = absl::Seconds(1);
  policy.max_backoff = absl::Seconds(10);
  policy.multiplier = 2;
  EXPECT_EQ(BackoffCeiling(policy, 1), absl::Seconds(1));
  EXPECT_EQ(BackoffCeiling(policy, 3), absl::Seconds(4));
  EXPECT_EQ(BackoffCeiling(policy, 50), absl::Seconds(10));
  absl::BitGen random;
  for (int i = 0; i < 200; ++i) {
    absl::Duration delay = RetryDelay(policy, 3, std::nullopt, random);
    EXPECT_GE(delay, absl::Seconds(2));
    EXPECT_LE(delay, absl::Seconds(4) + absl::Milliseconds(1));
  }
  EXPECT_GE(RetryDelay(policy, 1, absl::Seconds(30), random), absl::Seconds(30));
  EXPECT_EQ(RetryDelay(policy, 1, absl::Hours(9), random), kMaxRetryAfter);
  const absl::Time now = absl::FromUnixSeconds(1'700'000'000);
  EXPECT_EQ(ParseRetryAfter("7", now), absl::Seconds(7));
  EXPECT_EQ(ParseRetryAfter("Tue, 14 Nov 2023 22:13:40 GMT", now), absl::Seconds(20));
  EXPECT_EQ(ParseRetryAfter("soon", now), std::nullopt);
}

TEST(EndpointSenderTest, ClassifiesAnswers) {
  auto answer = [](int status, std::string retry_after = "") {
    client::ClientResponse response;
    response.status = status;
    if (!retry_after.empty()) response.headers = {{"retry-after", retry_after}};
    return ClassifyResponse(response, absl::Now());
  };
  EXPECT_EQ(answer(204).kind, AttemptOutcome::Kind::kDelivered);
  EXPECT_EQ(answer(500).kind, AttemptOutcome::Kind::kRetry);
  EXPECT_EQ(answer(408).kind, AttemptOutcome::Kind::kRetry);
  AttemptOutcome throttled = answer(429, "3");
  EXPECT_EQ(throttled.kind, AttemptOutcome::Kind::kRetry);
  EXPECT_EQ(throttled.retry_after, absl::Seconds(3));
  EXPECT_EQ(answer(400).kind, AttemptOutcome::Kind::kRejected);
  EXPECT_EQ(answer(404).kind, AttemptOutcome::Kind::kRejected);
  EXPECT_EQ(answer(301).kind, AttemptOutcome::Kind::kRejected);
  AttemptOutcome unreachable =
      ClassifyResponse(absl::UnavailableError("connection refused"), absl::Now());
  EXPECT_EQ(unreachable.kind, AttemptOutcome::Kind::kRetry);
  EXPECT_EQ(unreachable.status, 0);
}

TEST(EndpointUrlTest, TakesUrlsApart) {
  absl::StatusOr<EndpointUrl> url = ParseEndpointUrl("https://hooks.example:8443/a/b?x=1");
  ASSERT_TRUE(url.ok());
  EXPECT_TRUE(url->tls);
  EXPECT_EQ(url->host, "hooks.example");
  EXPECT_EQ(url->port, 8443);
  EXPECT_EQ(url->target, "/a/b?x=1");
  url = ParseEndpointUrl("http://[::1]/");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->host, "::1");
  EXPECT_EQ(url->port, 80);
  EXPECT_FALSE(ParseEndpointUrl("ftp://x/").ok());
  EXPECT_FALSE(ParseEndpointUrl("http://user:pw@x/").ok());
  EXPECT_FALSE(ParseEndpointUrl("/relative").ok());
}

TEST(SubscriptionJsonTest, RoundTripsAndNamesDrift) {
  absl::StatusOr<PushSubscription> a = ParseSubscriptionJson(
      R"({"name":"s","streams":"orders.*","endpoint":"http://127.0.0.1:9/","lingerMs":50,)"
      R"("retry":{"maxAttempts":3},"secrets":["0123456789abcdef"]})");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->linger, absl::Milliseconds(50));
  EXPECT_EQ(a->retry.max_attempts, 3);
  absl::StatusOr<PushSubscription> again =
      ParseSubscriptionJson(boost::json::serialize(SubscriptionJson(*a, /*with_secrets=*/true)));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(DriftBetween(*a, *again), "");
  EXPECT_EQ(again->secrets, a->secrets);
  PushSubscription b = *a;
  b.endpoint = "http://127.0.0.1:10/";
  b.retry.max_attempts = 4;
  b.secrets = {"another-secret-0123"};  // Rotation is not drift.
  EXPECT_EQ(DriftBetween(*a, b), "endpoint, retry.maxAttempts");
  EXPECT_FALSE(ParseSubscriptionJson(R"({"name":"s","streams":"o","endpoint":"http://x/",)"
                                     R"("secrets":["0123456789abcdef"],"retry":{"tries":1}})")
                   .ok());
}

// The fields added for concurrency, the circuit and dead-letter retention:
// parsed, written back, validated with the field named, part of drift.
TEST(SubscriptionJsonTest, ConcurrencyCircuitAndRetention) {
  constexpr absl::string_view kStart =
      R"({"name":"s","streams":"o","endpoint":"http://127.0.0.1:9/","secrets":["0123456789abcdef"],)";
  absl::StatusOr<PushSubscription> a = ParseSubscriptionJson(
      absl::StrCat(kStart, R"("concurrency":4,"circuit":{"failureThreshold":2,"openMs":1500},)",
                   R"("deadLetterRetention":{"maxAge":"168h","maxEvents":10}})"));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->concurrency, 4);
  EXPECT_EQ(a->circuit.failure_threshold, 2);
  EXPECT_EQ(a->circuit.open_for, absl::Milliseconds(1500));
  EXPECT_EQ(a->dead_letter_retention.max_age, absl::Hours(168));
  EXPECT_EQ(a->dead_letter_retention.max_events, 10u);
  absl::StatusOr<PushSubscription> again =
      ParseSubscriptionJson(boost::json::serialize(SubscriptionJson(*a, /*with_secrets=*/true)));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(DriftBetween(*a, *again), "");
  PushSubscription b = *a;
  b.circuit.open_for = absl::Seconds(2);
  b.dead_letter_retention.max_events = 11;
  EXPECT_EQ(DriftBetween(*a, b), "circuit.openMs, deadLetterRetention");
  for (const auto& [field, message] : std::vector<std::pair<std::string, std::string>>{
           {R"("concurrency":65})", "concurrency"},
           {R"("circuit":{"openMs":0}})", "circuit.openMs"},
           {R"("circuit":{"failureThreshold":5000000000}})", "circuit.failureThreshold"},
           {R"("circuit":{"probe":1}})", "circuit.probe"},
           {R"("deadLetterRetention":{"maxAge":"soon"}})", "max_age"}}) {
    absl::StatusOr<PushSubscription> bad = ParseSubscriptionJson(absl::StrCat(kStart, field));
    ASSERT_FALSE(bad.ok()) << field;
    EXPECT_NE(bad.status().message().find(message), std::string::npos) << bad.status();
  }
}

// Each answered POST lands in the first bucket whose bound holds its
// latency; /metrics shows the buckets cumulative, and _count all of them.
TEST(PushMetricsTest, LatencyHistogramBuckets) {
  DeliveryStats stats;
  stats.Delivered(1, 200, absl::Microseconds(300));      // le 0.001
  stats.Delivered(1, 200, absl::Milliseconds(3));        // le 0.005
  stats.Failed(503, "HTTP 503", absl::Milliseconds(5));  // le 0.005 (the bound holds)
  stats.Failed(0, "no answer", absl::Seconds(1));        // no answer: not a latency
  stats.Delivered(1, 200, absl::Seconds(20));            // above every bound
  SubscriptionStatus status;
  status.subscription.name = "h";
  status.counts = stats.Snapshot();
  EXPECT_EQ(status.counts.LatencyCount(), 4u);
  const std::string text = PushMetricsText({status});
  const std::string bucket = R"(keel_push_endpoint_latency_seconds_bucket{subscription="h",le=")";
  EXPECT_NE(text.find(bucket + R"(0.001"} 1)"), std::string::npos) << text;
  EXPECT_NE(text.find(bucket + R"(0.0025"} 1)"), std::string::npos) << text;
  EXPECT_NE(text.find(bucket + R"(0.005"} 3)"), std::string::npos) << text;
  EXPECT_NE(text.find(bucket + R"(10"} 3)"), std::string::npos) << text;
  EXPECT_NE(text.find(bucket + R"(+Inf"} 4)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(keel_push_endpoint_latency_seconds_count{subscription="h"} 4)"),
            std::string::npos);
  EXPECT_NE(text.find("# TYPE keel_push_endpoint_latency_seconds histogram"), std::string::npos);
}

}  // namespace
}  // namespace keel::push
