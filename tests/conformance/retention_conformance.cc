// Retention: reading below the oldest retained event is a kRetentionGap error
// with details on Replay, and a `bus.gap` notice followed by the oldest
// retained event on Follow. Runs only for targets with `retention_config`.
#include <gmock/gmock.h>

#include <optional>
#include <vector>

#include "keel/core/errors.h"
#include "keel/tests/conformance/conformance.h"
#include "keel/tests/conformance/helpers.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::conformance {

void LinkRetentionTests() {}

// A host whose drivers have no retention instantiates this suite with no
// targets; that is expected, not a mistake.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(RetentionConformanceTest);

namespace {

using ::keel::testing::HasErrorKind;
using ::testing::IsEmpty;

constexpr uint64_t kPublished = 20;

// Publishes kPublished events to `stream` and returns the receipts and the
// bounds that result, checking that at most kRetainedEvents are retained.
void PublishPastRetention(EventBus& bus, absl::string_view stream, std::vector<Receipt>& receipts,
                          StreamInfo& info) {
  ASSERT_OK_AND_ASSIGN(receipts, PublishN(bus, stream, kPublished));
  ASSERT_OK_AND_ASSIGN(info, bus.replayer()->Bounds(stream));
  ASSERT_EQ(info.last_sequence, kPublished);
  ASSERT_GE(info.first_sequence, kPublished - RetentionConformanceTest::kRetainedEvents + 1)
      << "the bus keeps more than max_events";
  ASSERT_EQ(info.count, info.last_sequence - info.first_sequence + 1);
}

TEST_P(RetentionConformanceTest, BoundsAndReplayStartAtOldestRetained) {
  std::vector<Receipt> receipts;
  StreamInfo info;
  ASSERT_NO_FATAL_FAILURE(PublishPastRetention(bus(), "kept", receipts, info));
  ASSERT_OK_AND_ASSIGN(std::vector<Event> stored, ReplayStream(replayer(), "kept"));
  ASSERT_EQ(Sequences(stored), Range(info.first_sequence, kPublished));
  for (const Event& event : stored) EXPECT_EQ(event.id, receipts[event.sequence - 1].id);
}

TEST_P(RetentionConformanceTest, TooOldCursorIsRetentionGapWithDetails) {
  std::vector<Receipt> receipts;
  StreamInfo info;
  ASSERT_NO_FATAL_FAILURE(PublishPastRetention(bus(), "old", receipts, info));
  ReplayRequest request;
  request.stream = "old";
  request.after = Position::After(receipts[2].cursor);  // Sequence 3: long gone.
  absl::StatusOr<ReplayPage> page = replayer().Replay(request);
  ASSERT_THAT(page, HasErrorKind(ErrorKind::kRetentionGap));
  EXPECT_EQ(page.status().code(), absl::StatusCode::kOutOfRange);
  std::optional<RetentionGap> gap = GetRetentionGap(page.status());
  ASSERT_TRUE(gap.has_value()) << page.status();
  EXPECT_EQ(gap->requested_after, 3u);
  EXPECT_EQ(gap->oldest, info.first_sequence);
}

TEST_P(RetentionConformanceTest, CursorJustBeforeOldestIsNotAGap) {
  std::vector<Receipt> receipts;
  StreamInfo info;
  ASSERT_NO_FATAL_FAILURE(PublishPastRetention(bus(), "edge", receipts, info));
  ReplayRequest request;
  request.stream = "edge";
  request.after = Position::After(receipts[info.first_sequence - 2].cursor);
  ASSERT_OK_AND_ASSIGN(ReplayPage page, replayer().Replay(request));
  EXPECT_EQ(Sequences(page.events), Range(info.first_sequence, kPublished));
}

TEST_P(RetentionConformanceTest, FollowerFromTooOldCursorGetsGapNoticeThenOldest) {
  std::vector<Receipt> receipts;
  StreamInfo info;
  ASSERT_NO_FATAL_FAILURE(PublishPastRetention(bus(), "gappy", receipts, info));
  ASSERT_OK_AND_ASSIGN(auto follower, bus().Follow("gappy", Position::After(receipts[2].cursor)));
  ReadResult result = ReadThrough(*follower, kPublished);
  ASSERT_OK(result.status);
  ASSERT_FALSE(result.all.empty());
  const Event& notice = *result.all.front();
  EXPECT_EQ(notice.type, kGapNoticeType);
  EXPECT_EQ(notice.sequence, 0u);
  EXPECT_EQ(notice.stream, "gappy");
  EXPECT_EQ(NoticeAttribute(notice, kNoticeFirst), 4u);
  EXPECT_EQ(NoticeAttribute(notice, kNoticeLast), info.first_sequence - 1);
  EXPECT_EQ(NoticeAttribute(notice, kNoticeCount), info.first_sequence - 4);
  EXPECT_EQ(result.notices.size(), 1u);
  EXPECT_EQ(Sequences(result.events), Range(info.first_sequence, kPublished));

  // It then continues live.
  ASSERT_OK(PublishN(bus(), "gappy", 2, "live"));
  ReadResult live = ReadThrough(*follower, kPublished + 2);
  ASSERT_OK(live.status);
  EXPECT_EQ(Sequences(live.all), Range(kPublished + 1, kPublished + 2));
}

TEST_P(RetentionConformanceTest, FollowerFromEarliestStartsAtOldestWithoutNotice) {
  std::vector<Receipt> receipts;
  StreamInfo info;
  ASSERT_NO_FATAL_FAILURE(PublishPastRetention(bus(), "fresh", receipts, info));
  ASSERT_OK_AND_ASSIGN(auto follower, bus().Follow("fresh", Position::Earliest()));
  ReadResult result = ReadThrough(*follower, kPublished);
  ASSERT_OK(result.status);
  EXPECT_THAT(result.notices, IsEmpty());
  EXPECT_EQ(Sequences(result.events), Range(info.first_sequence, kPublished));
}

}  // namespace
}  // namespace keel::conformance
