// Concurrency per subscription: batches of different streams are in flight
// at once, up to the subscription's concurrency, each on a connection of
// its own; a stream's batches never overlap and arrive in order.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "keel/tests/push/delivery_fixture.h"

namespace keel::push_test {
namespace {

using ::testing::ElementsAreArray;

// What the receiver saw in flight at once.
class InFlight {
 public:
  // Counts a request of `stream` in while `hold` passes.
  void Hold(const std::string& stream, absl::Duration hold) {
    {
      MutexLock lock(&mu_);
      ++total_;
      if (++per_stream_[stream] > 1) overlapped_stream_ = true;
      most_ = std::max(most_, total_);
    }
    absl::SleepFor(hold);
    MutexLock lock(&mu_);
    --total_;
    --per_stream_[stream];
  }
  int most() {
    MutexLock lock(&mu_);
    return most_;
  }
  bool overlapped_stream() {
    MutexLock lock(&mu_);
    return overlapped_stream_;
  }

 private:
  Mutex mu_;
  int total_ ABSL_GUARDED_BY(mu_) = 0;
  int most_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, int> per_stream_ ABSL_GUARDED_BY(mu_);
  bool overlapped_stream_ ABSL_GUARDED_BY(mu_) = false;
};

TEST_F(PushDeliveryTest, BatchesOfDifferentStreamsGoOutInParallelUpToTheConcurrency) {
  InFlight in_flight;
  TestReceiver receiver([&in_flight](const ReceivedRequest& request, int) {
    in_flight.Hold(request.Header("keel-stream"), absl::Milliseconds(100));
    return Reply{200};
  });
  json::object declaration = FastRetryDeclaration("parallel", "orders.*", receiver.url());
  declaration["batchSize"] = 2;
  declaration["concurrency"] = 3;
  declaration["timeoutMs"] = 10000;
  constexpr int kStreams = 6;
  constexpr int kPerStream = 8;
  for (int s = 0; s < kStreams; ++s) {
    for (int i = 1; i <= kPerStream; ++i) {
      ASSERT_TRUE(PublishN(*http_, absl::StrCat("orders.", s), "order.created", i).ok());
    }
  }
  Create(declaration);
  ASSERT_TRUE(receiver.WaitFor(
      [](const std::vector<ReceivedRequest>& r) {
        return Acknowledged(r).size() >= kStreams * kPerStream;
      },
      kWait));

  EXPECT_GE(in_flight.most(), 2);               // Streams were delivered side by side...
  EXPECT_LE(in_flight.most(), 3);               // ...never more than the concurrency...
  EXPECT_FALSE(in_flight.overlapped_stream());  // ...and a stream one batch at a time.
  const std::vector<Delivered> acknowledged = Acknowledged(receiver.requests());
  for (int s = 0; s < kStreams; ++s) {
    EXPECT_THAT(SequencesOf(acknowledged, absl::StrCat("orders.", s)),
                ElementsAreArray(OneTo(kPerStream)));
  }
  EXPECT_EQ(Describe("parallel").at("concurrency").to_number<int>(), 3);
}

TEST_F(PushDeliveryTest, ConcurrencyIsValidatedAndPartOfTheDeclaration) {
  TestReceiver receiver([](const ReceivedRequest&, int) { return Reply{200}; });
  json::object declaration = FastRetryDeclaration("bounded", "orders", receiver.url());
  declaration["concurrency"] = 0;
  absl::StatusOr<client::ClientResponse> refused = CreateSubscription(*http_, declaration);
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, 400) << refused->body;
  declaration["concurrency"] = 2;
  Create(declaration);
  declaration["concurrency"] = 4;
  absl::StatusOr<client::ClientResponse> drift = CreateSubscription(*http_, declaration);
  ASSERT_TRUE(drift.ok());
  EXPECT_EQ(drift->status, 409) << drift->body;
  EXPECT_NE(drift->body.find("concurrency"), std::string::npos) << drift->body;
}

}  // namespace
}  // namespace keel::push_test
