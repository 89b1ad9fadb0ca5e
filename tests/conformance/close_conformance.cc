// Close: stops publishes with kClosed, lets readers drain what was queued
// before ending them with kClosed, and may be called any number of times.
#include <gmock/gmock.h>

#include <thread>
#include <vector>

#include "keel/core/errors.h"
#include "keel/tests/conformance/conformance.h"
#include "keel/tests/conformance/helpers.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::conformance {

void LinkCloseTests() {}

namespace {

using ::keel::testing::HasErrorKind;

TEST_P(CloseConformanceTest, PublishAfterCloseIsClosed) {
  ASSERT_OK(PublishN(bus(), "s", 2));
  ASSERT_OK(bus().Close());
  EXPECT_THAT(bus().Publish(MakeEvent("s")), HasErrorKind(ErrorKind::kClosed));
  EXPECT_THAT(bus().PublishBatch("s", {MakeEvent("s"), MakeEvent("s")}),
              HasErrorKind(ErrorKind::kClosed));
  EXPECT_THAT(bus().Publish(MakeEvent("new.stream")), HasErrorKind(ErrorKind::kClosed));
}

TEST_P(CloseConformanceTest, CloseIsIdempotent) {
  ASSERT_OK(PublishN(bus(), "s", 1));
  EXPECT_OK(bus().Close());
  EXPECT_OK(bus().Close());
  EXPECT_OK(bus().Close(absl::ZeroDuration()));
}

TEST_P(CloseConformanceTest, SubscriberDrainsQueuedEventsThenSeesClosed) {
  SubscribeOptions options;
  options.stream = "drain";
  ASSERT_OK_AND_ASSIGN(auto subscription, SubscribeLive(bus(), options));
  ASSERT_OK(PublishN(bus(), "drain", 5));  // Queued: the subscriber is live.
  ASSERT_OK(bus().Close());

  ReadResult rest = ReadToError(*subscription);
  EXPECT_EQ(Sequences(rest.events), Range(1, 5)) << "queued events survive Close";
  EXPECT_THAT(rest.status, HasErrorKind(ErrorKind::kClosed));
  EXPECT_THAT(subscription->Poll(10), HasErrorKind(ErrorKind::kClosed)) << "and stay closed";
}

TEST_P(CloseConformanceTest, BlockedReaderWakesWithClosed) {
  ASSERT_OK_AND_ASSIGN(auto subscription, bus().Follow("idle", Position::Latest()));
  absl::StatusOr<std::vector<EventPtr>> result;
  // Waits far longer than the test should take, so only Close can end it.
  std::thread reader([&] { result = subscription->Next(10, kLongWait); });
  ASSERT_OK(bus().Close());
  reader.join();
  EXPECT_THAT(result, HasErrorKind(ErrorKind::kClosed));
}

TEST_P(CloseConformanceTest, CancelledSubscriptionSeesClosed) {
  ASSERT_OK_AND_ASSIGN(auto subscription, bus().Follow("cancel", Position::Latest()));
  ASSERT_OK(PublishN(bus(), "cancel", 2));
  subscription->Cancel();
  EXPECT_THAT(subscription->Poll(10), HasErrorKind(ErrorKind::kClosed));
  // The bus itself is unaffected.
  EXPECT_OK(bus().Publish(MakeEvent("cancel")));
}

}  // namespace
}  // namespace keel::conformance
