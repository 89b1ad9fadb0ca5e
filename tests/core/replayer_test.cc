// Resolving cursors against a stream whose store had earlier epochs
// (core/replayer.h, EarlierEpoch; rfcs/0003-durable-layout.md, "Epochs").
#include "keel/core/replayer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "keel/core/errors.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel {
namespace {

using ::keel::testing::HasErrorKind;
using ::keel::testing::IsOk;
using ::testing::HasSubstr;

constexpr uint64_t kFirstEpoch = 11;
constexpr uint64_t kSecondEpoch = 22;
constexpr uint64_t kEpoch = 33;

// Stream "s" has events 1..20. It was given 9 first in the second epoch
// (the first epoch's 9.. were lost) and nothing yet in the current one.
StreamInfo Info() {
  StreamInfo info;
  info.stream = "s";
  info.first_sequence = 1;
  info.last_sequence = 20;
  info.count = 20;
  info.head = Cursor::For("s", kEpoch, 20);
  info.earlier_epochs = {EarlierEpoch{kFirstEpoch, 9}, EarlierEpoch{kSecondEpoch}};
  return info;
}

uint64_t Resolve(uint64_t epoch, uint64_t sequence) {
  return ResolvePosition(Position::After(Cursor::For("s", epoch, sequence)), Info(), kEpoch)
      .value_or(UINT64_MAX);
}

TEST(EarlierEpochTest, ACursorOfAnEarlierEpochIsGoodBelowItsBound) {
  EXPECT_EQ(Resolve(kFirstEpoch, 0), 0u);
  EXPECT_EQ(Resolve(kFirstEpoch, 8), 8u);
  EXPECT_EQ(Resolve(kSecondEpoch, 20), 20u);  // Nothing given since: good up to the head.
  EXPECT_EQ(Resolve(kEpoch, 20), 20u);
}

TEST(EarlierEpochTest, ACursorOfALostEventIsAMismatchThatSaysWhereToResume) {
  for (uint64_t sequence : {9, 15}) {
    absl::StatusOr<uint64_t> resolved =
        ResolvePosition(Position::After(Cursor::For("s", kFirstEpoch, sequence)), Info(), kEpoch);
    EXPECT_THAT(resolved, HasErrorKind(ErrorKind::kCursorMismatch));
    EXPECT_THAT(resolved.status().message(), HasSubstr("lost"));
    EXPECT_THAT(resolved.status().message(), HasSubstr(Cursor::For("s", kEpoch, 8).Encode()));
  }
}

TEST(EarlierEpochTest, WhenNothingWasKeptTheMismatchSaysToStartFromEarliest) {
  StreamInfo info = Info();
  info.earlier_epochs = {EarlierEpoch{kFirstEpoch, 1}};
  absl::Status status = CheckCursorFor(Cursor::For("s", kFirstEpoch, 3), info, kEpoch);
  EXPECT_THAT(status, HasErrorKind(ErrorKind::kCursorMismatch));
  EXPECT_THAT(status.message(), HasSubstr("resume from earliest"));
}

TEST(EarlierEpochTest, AnUntilCursorIsCheckedTheSameWay) {
  ReplayRequest request;
  request.stream = "s";
  request.until = Cursor::For("s", kFirstEpoch, 5);
  EXPECT_EQ(ResolveUntil(request, Info(), kEpoch).value_or(0), 5u);
  request.until = Cursor::For("s", kFirstEpoch, 12);
  EXPECT_THAT(ResolveUntil(request, Info(), kEpoch), HasErrorKind(ErrorKind::kCursorMismatch));
}

// The entry of epoch 0 stands for forgotten epochs (group records); no
// cursor carries epoch 0, and a hand-made one is refused.
TEST(EarlierEpochTest, ACursorOfEpochZeroIsRefused) {
  StreamInfo info = Info();
  info.earlier_epochs.push_back(EarlierEpoch{0, 9});
  EXPECT_THAT(CheckCursorFor(Cursor::For("s", 0, 3), info, kEpoch),
              HasErrorKind(ErrorKind::kCursorMismatch));
  ReplayRequest request;
  request.stream = "s";
  request.until = Cursor::For("s", 0, 3);
  EXPECT_THAT(ResolveUntil(request, info, kEpoch), HasErrorKind(ErrorKind::kCursorMismatch));
}

TEST(EarlierEpochTest, UnknownEpochsAndOtherStreamsStayMismatches) {
  EXPECT_THAT(CheckCursorFor(Cursor::For("s", 44, 1), Info(), kEpoch),
              HasErrorKind(ErrorKind::kCursorMismatch));
  EXPECT_THAT(CheckCursorFor(Cursor::For("t", kFirstEpoch, 1), Info(), kEpoch),
              HasErrorKind(ErrorKind::kCursorMismatch));
  EXPECT_THAT(CheckCursorFor(Cursor::For("s", kFirstEpoch, 1), Info(), kEpoch), IsOk());
}

}  // namespace
}  // namespace keel
