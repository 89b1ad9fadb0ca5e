// Publish validation: invalid input is rejected with the documented kind and
// consumes nothing (the next valid publish gets the next sequence); batches
// are all-or-nothing.
#include <gmock/gmock.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "keel/core/errors.h"
#include "keel/core/mutex.h"
#include "keel/tests/conformance/conformance.h"
#include "keel/tests/conformance/helpers.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::conformance {

void LinkPublishTests() {}

namespace {

using ::keel::testing::HasErrorKind;
using ::testing::ElementsAre;

// Checks that `stream` holds exactly `expected` (sequences 1..n) and that the
// next publish gets sequence n + 1, i.e. that a rejected publish consumed nothing.
void ExpectNothingConsumed(EventBus& bus, Replayer& replayer, const std::string& stream,
                           uint64_t expected) {
  ASSERT_OK_AND_ASSIGN(std::vector<Event> stored, ReplayStream(replayer, stream));
  EXPECT_EQ(Sequences(stored), Range(1, expected));
  ASSERT_OK_AND_ASSIGN(Receipt next, bus.Publish(MakeEvent(stream)));
  EXPECT_EQ(next.sequence, expected + 1);
}

TEST_P(PublishConformanceTest, PresetSequenceIsRejectedAndConsumesNothing) {
  ASSERT_OK(bus().Publish(MakeEvent("preset")));
  Event event = MakeEvent("preset");
  event.sequence = 2;  // Even the "right" next sequence: ordering is the bus's job.
  EXPECT_THAT(bus().Publish(event), HasErrorKind(ErrorKind::kInvalidArgument));
  event.sequence = 99;
  EXPECT_THAT(bus().Publish(event), HasErrorKind(ErrorKind::kInvalidArgument));
  ExpectNothingConsumed(bus(), replayer(), "preset", 1);
}

TEST_P(PublishConformanceTest, InvalidStreamNamesAreRejected) {
  const std::vector<std::string> bad = {"",          "has space",          "slash/name",
                                        "question?", "tab\tname",          "caf\xc3\xa9",
                                        "new\nline", std::string(256, 'a')};
  ASSERT_OK_AND_ASSIGN(std::vector<StreamInfo> before, replayer().ListStreams("", 1000));
  for (const std::string& stream : bad) {
    SCOPED_TRACE(stream);
    EXPECT_THAT(bus().Publish(MakeEvent(stream)), HasErrorKind(ErrorKind::kInvalidArgument));
    EXPECT_THAT(bus().PublishBatch(stream, {MakeEvent("")}),
                HasErrorKind(ErrorKind::kInvalidArgument));
  }
  // Nothing was created by the rejected publishes.
  ASSERT_OK_AND_ASSIGN(std::vector<StreamInfo> after, replayer().ListStreams("", 1000));
  EXPECT_EQ(after.size(), before.size());
}

TEST_P(PublishConformanceTest, EveryNameCharacterAndMaximumLengthAreAccepted) {
  const std::vector<std::string> good = {"Az09._:-", "a", std::string(255, 'x')};
  for (const std::string& stream : good) {
    SCOPED_TRACE(stream);
    ASSERT_OK_AND_ASSIGN(Receipt receipt, bus().Publish(MakeEvent(stream)));
    EXPECT_EQ(receipt.sequence, 1u);
    EXPECT_EQ(receipt.stream, stream);
  }
}

TEST_P(PublishConformanceTest, EmptyTypeIsRejectedAndConsumesNothing) {
  ASSERT_OK(bus().Publish(MakeEvent("typed")));
  EXPECT_THAT(bus().Publish(MakeEvent("typed", "")), HasErrorKind(ErrorKind::kInvalidArgument));
  ExpectNothingConsumed(bus(), replayer(), "typed", 1);
}

TEST_P(PublishConformanceTest, OversizePayloadIsRejectedAndConsumesNothing) {
  ASSERT_OK(bus().Publish(MakeEvent("big")));
  // Far above the default 128 KiB event limit.
  Event event = MakeEvent("big", "blob.put", std::string(4 << 20, 'x'));
  EXPECT_THAT(bus().Publish(std::move(event)), HasErrorKind(ErrorKind::kPayloadTooLarge));
  ExpectNothingConsumed(bus(), replayer(), "big", 1);
}

TEST_P(PublishConformanceTest, ValidBatchGetsConsecutiveSequences) {
  ASSERT_OK(bus().Publish(MakeEvent("batch")));
  std::vector<Event> events = {MakeEvent("batch", "t", "one"), MakeEvent("", "t", "two"),
                               MakeEvent("batch", "t", "three")};
  ASSERT_OK_AND_ASSIGN(std::vector<Receipt> receipts, bus().PublishBatch("batch", events));
  EXPECT_THAT(Sequences(receipts), ElementsAre(2, 3, 4));
  for (const Receipt& receipt : receipts) EXPECT_EQ(receipt.stream, "batch");

  ASSERT_OK_AND_ASSIGN(std::vector<Event> stored, ReplayStream(replayer(), "batch"));
  ASSERT_EQ(stored.size(), 4u);
  EXPECT_EQ(stored[1].payload, "one");
  EXPECT_EQ(stored[2].payload, "two");
  EXPECT_EQ(stored[2].stream, "batch") << "an event that left its stream empty gets the batch's";
  EXPECT_EQ(stored[3].payload, "three");
}

TEST_P(PublishConformanceTest, BatchWithInvalidThirdEventStoresNothing) {
  ASSERT_OK(bus().Publish(MakeEvent("atomic")));
  std::vector<Event> events = {MakeEvent("atomic"), MakeEvent("atomic"),
                               MakeEvent("atomic", /*type=*/""), MakeEvent("atomic")};
  EXPECT_THAT(bus().PublishBatch("atomic", events), HasErrorKind(ErrorKind::kInvalidArgument));
  ExpectNothingConsumed(bus(), replayer(), "atomic", 1);
}

TEST_P(PublishConformanceTest, BatchWithOversizeEventStoresNothing) {
  std::vector<Event> events = {MakeEvent("atomic.size"), MakeEvent("atomic.size"),
                               MakeEvent("atomic.size", "t", std::string(4 << 20, 'x'))};
  EXPECT_THAT(bus().PublishBatch("atomic.size", events), HasErrorKind(ErrorKind::kPayloadTooLarge));
  ExpectNothingConsumed(bus(), replayer(), "atomic.size", 0);
}

TEST_P(PublishConformanceTest, BatchNamingAnotherStreamIsRejected) {
  std::vector<Event> events = {MakeEvent("mine"), MakeEvent("theirs"), MakeEvent("mine")};
  EXPECT_THAT(bus().PublishBatch("mine", events), HasErrorKind(ErrorKind::kInvalidArgument));
  ExpectNothingConsumed(bus(), replayer(), "theirs", 0);
  ExpectNothingConsumed(bus(), replayer(), "mine", 0);
}

TEST_P(PublishConformanceTest, EmptyBatchIsRejected) {
  EXPECT_THAT(bus().PublishBatch("empty", {}), HasErrorKind(ErrorKind::kInvalidArgument));
  ExpectNothingConsumed(bus(), replayer(), "empty", 0);
}

// PublishBatch through PublishBatchAsync: the answer comes through the
// callback, whether the driver commits without blocking (PublishesAsync) or
// falls back to PublishBatch.
absl::StatusOr<std::vector<Receipt>> PublishAsync(EventBus& bus, const std::string& stream,
                                                  std::vector<Event> events,
                                                  const PublishOptions& options = {}) {
  auto answer = std::make_shared<std::pair<Notification, absl::StatusOr<std::vector<Receipt>>>>();
  bus.PublishBatchAsync(stream, std::move(events), options,
                        [answer](absl::StatusOr<std::vector<Receipt>> receipts) {
                          answer->second = std::move(receipts);
                          answer->first.Notify();
                        });
  if (!answer->first.WaitForNotificationWithTimeout(absl::Seconds(60))) {
    return absl::DeadlineExceededError("PublishBatchAsync never answered");
  }
  return answer->second;
}

TEST_P(PublishConformanceTest, PublishBatchAsyncAnswersAsPublishBatchWould) {
  ASSERT_OK(bus().Publish(MakeEvent("async")));
  ASSERT_OK_AND_ASSIGN(
      std::vector<Receipt> receipts,
      PublishAsync(bus(), "async", {MakeEvent("async", "t", "one"), MakeEvent("", "t", "two")}));
  EXPECT_THAT(Sequences(receipts), ElementsAre(2, 3));
  ASSERT_OK_AND_ASSIGN(std::vector<Event> stored, ReplayStream(replayer(), "async"));
  ASSERT_EQ(stored.size(), 3u);
  EXPECT_EQ(stored[1].payload, "one");
  EXPECT_EQ(stored[2].payload, "two");

  EXPECT_THAT(PublishAsync(bus(), "async", {MakeEvent("async", /*type=*/"")}),
              HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(PublishAsync(bus(), "async", {MakeEvent("async")},
                           PublishOptions{.expected_last_sequence = 1}),
              HasErrorKind(ErrorKind::kConflict));
  ExpectNothingConsumed(bus(), replayer(), "async", 3);
}

}  // namespace
}  // namespace keel::conformance
