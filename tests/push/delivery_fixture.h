// PushDeliveryTest: a PushDaemon and a client to it, for the tests that
// declare subscriptions over HTTP and watch what TestReceivers get.
#ifndef KEEL_TESTS_PUSH_DELIVERY_FIXTURE_H_
#define KEEL_TESTS_PUSH_DELIVERY_FIXTURE_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "keel/tests/push/push_daemon.h"

namespace keel::push_test {

inline constexpr char kTestSecret[] = "a-signing-secret-of-32-bytes-...";

// A declaration of `name` whose retries come fast (10–50 ms apart, 10
// attempts) and whose POSTs time out after 300 ms.
inline json::object FastRetryDeclaration(const std::string& name, const std::string& streams,
                                         const std::string& endpoint) {
  json::object retry;
  retry["maxAttempts"] = 10;
  retry["initialBackoffMs"] = 10;
  retry["maxBackoffMs"] = 50;
  json::object d;
  d["name"] = name;
  d["streams"] = streams;
  d["endpoint"] = endpoint;
  d["timeoutMs"] = 300;
  d["retry"] = std::move(retry);
  d["secrets"] = json::array{kTestSecret};
  return d;
}

inline std::vector<uint64_t> OneTo(uint64_t n) {
  std::vector<uint64_t> out;
  for (uint64_t i = 1; i <= n; ++i) out.push_back(i);
  return out;
}

class PushDeliveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(daemon_.Start().ok());
    http_ = daemon_.NewClient();
  }

  void Create(const json::object& declaration) {
    absl::StatusOr<client::ClientResponse> created = CreateSubscription(*http_, declaration);
    ASSERT_TRUE(created.ok()) << created.status();
    ASSERT_EQ(created->status, 201) << created->body;
  }

  json::object Describe(const std::string& name) {
    absl::StatusOr<client::ClientResponse> response = http_->Get("/v1/subscriptions/" + name);
    EXPECT_TRUE(response.ok() && response->status == 200);
    if (!response.ok() || response->status != 200) return {};
    return json::parse(response->body).as_object();
  }

  // Polls Describe(name) until `done` holds of it or kWait passed;
  // whether it held.
  bool DescribeUntil(const std::string& name,
                     const std::function<bool(const json::object& status)>& done) {
    const absl::Time deadline = absl::Now() + kWait;
    while (absl::Now() < deadline) {
      if (done(Describe(name))) return true;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return false;
  }

  PushDaemon daemon_;
  std::unique_ptr<client::HttpClient> http_;
};

}  // namespace keel::push_test

#endif  // KEEL_TESTS_PUSH_DELIVERY_FIXTURE_H_
