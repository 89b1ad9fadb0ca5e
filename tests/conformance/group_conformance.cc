// Consumer groups: where a new group starts, fencing tokens, stale and
// backward commits, lease expiry and redelivery, seeks, describe and list.
// Leases expire only when the test moves the bus's manual clock.
#include <gmock/gmock.h>

#include <optional>
#include <vector>

#include "keel/core/errors.h"
#include "keel/core/group_coordinator.h"
#include "keel/tests/conformance/conformance.h"
#include "keel/tests/conformance/helpers.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::conformance {

void LinkGroupTests() {}

void GroupConformanceTest::SetUp() {
  ConformanceTest::SetUp();
  if (HasFatalFailure()) return;
  // Like history (ConformanceTest::SetUp), consumer groups are part of the
  // contract: every DriverBase driver has them.
  ASSERT_NE(bus().groups(), nullptr) << "the conformance suite needs a driver with consumer groups";
}

namespace {

using ::keel::testing::HasErrorKind;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr absl::Duration kLease = absl::Seconds(10);

ConsumeRequest Request(absl::string_view stream, absl::string_view group, size_t limit = 100) {
  ConsumeRequest request;
  request.stream = std::string(stream);
  request.group = std::string(group);
  request.limit = limit;
  request.lease = kLease;
  return request;
}

TEST_P(GroupConformanceTest, NewGroupStartsAtEarliestAndLeasesThePage) {
  ASSERT_OK(PublishN(bus(), "orders", 3).status());
  ASSERT_OK_AND_ASSIGN(ConsumePage page, groups().Consume(Request("orders", "billing")));
  EXPECT_THAT(Sequences(page.events), ElementsAre(1, 2, 3));
  EXPECT_GT(page.lease.token, 0u);
  EXPECT_EQ(page.lease.from, Cursor::For("orders", epoch(), 0));
  EXPECT_EQ(page.lease.to, Cursor::For("orders", epoch(), 3));
  EXPECT_EQ(page.lease.expires, clock().Now() + kLease);
  EXPECT_FALSE(page.busy_until.has_value());
  ASSERT_OK(groups().Commit("orders", "billing", page.lease.to, page.lease.token));
  ASSERT_OK_AND_ASSIGN(GroupInfo info, groups().Describe("orders", "billing"));
  EXPECT_EQ(info.cursor.sequence, 3u);
  EXPECT_EQ(info.lag, 0u);
  EXPECT_FALSE(info.lease.has_value());
}

TEST_P(GroupConformanceTest, PagesFollowTheCommittedCursor) {
  ASSERT_OK(PublishN(bus(), "paged", 5).status());
  ASSERT_OK_AND_ASSIGN(ConsumePage first, groups().Consume(Request("paged", "g", 2)));
  EXPECT_THAT(Sequences(first.events), ElementsAre(1, 2));
  ASSERT_OK(groups().Commit("paged", "g", first.lease.to, first.lease.token));
  ASSERT_OK_AND_ASSIGN(ConsumePage second, groups().Consume(Request("paged", "g", 2)));
  EXPECT_THAT(Sequences(second.events), ElementsAre(3, 4));
  EXPECT_EQ(second.lease.from.sequence, 2u);
}

TEST_P(GroupConformanceTest, NewGroupStartsAtLatestWhenAsked) {
  ASSERT_OK(PublishN(bus(), "late", 3).status());
  ConsumeRequest request = Request("late", "tail");
  request.start = ConsumeRequest::Start::kLatest;
  ASSERT_OK_AND_ASSIGN(ConsumePage empty, groups().Consume(request));
  EXPECT_THAT(empty.events, IsEmpty());
  EXPECT_EQ(empty.lease.token, 0u);
  ASSERT_OK_AND_ASSIGN(GroupInfo info, groups().Describe("late", "tail"));
  EXPECT_EQ(info.cursor.sequence, 3u);
  ASSERT_OK(PublishN(bus(), "late", 2).status());
  // `start` only applies to a new group: the group stays where it began.
  request.start = ConsumeRequest::Start::kEarliest;
  ASSERT_OK_AND_ASSIGN(ConsumePage page, groups().Consume(request));
  EXPECT_THAT(Sequences(page.events), ElementsAre(4, 5));
}

TEST_P(GroupConformanceTest, LiveLeaseMakesOtherConsumersWait) {
  ASSERT_OK(PublishN(bus(), "busy", 2).status());
  ASSERT_OK_AND_ASSIGN(ConsumePage held, groups().Consume(Request("busy", "g")));
  ASSERT_OK_AND_ASSIGN(ConsumePage other, groups().Consume(Request("busy", "g")));
  EXPECT_THAT(other.events, IsEmpty());
  EXPECT_EQ(other.lease.token, 0u);
  ASSERT_TRUE(other.busy_until.has_value());
  EXPECT_EQ(*other.busy_until, held.lease.expires);
  ASSERT_OK_AND_ASSIGN(GroupInfo info, groups().Describe("busy", "g"));
  ASSERT_TRUE(info.lease.has_value());
  EXPECT_EQ(info.lease->token, held.lease.token);
  // Another group of the same stream is independent.
  ASSERT_OK_AND_ASSIGN(ConsumePage independent, groups().Consume(Request("busy", "other")));
  EXPECT_THAT(Sequences(independent.events), ElementsAre(1, 2));
}

TEST_P(GroupConformanceTest, ExpiredLeaseIsRedeliveredWithAHigherToken) {
  ASSERT_OK(PublishN(bus(), "redo", 3).status());
  ASSERT_OK_AND_ASSIGN(ConsumePage crashed, groups().Consume(Request("redo", "g")));
  clock().Advance(kLease);  // Expired: the lease is live strictly before `expires`.
  ASSERT_OK_AND_ASSIGN(ConsumePage again, groups().Consume(Request("redo", "g")));
  EXPECT_EQ(Sequences(again.events), Sequences(crashed.events));
  EXPECT_GT(again.lease.token, crashed.lease.token);
}

TEST_P(GroupConformanceTest, StaleTokenIsRefusedWithConflict) {
  ASSERT_OK(PublishN(bus(), "stale", 3).status());
  ASSERT_OK_AND_ASSIGN(ConsumePage old_lease, groups().Consume(Request("stale", "g")));
  clock().Advance(kLease + absl::Seconds(1));
  ASSERT_OK_AND_ASSIGN(ConsumePage new_lease, groups().Consume(Request("stale", "g", 1)));
  absl::Status stale =
      groups().Commit("stale", "g", old_lease.lease.to, old_lease.lease.token);
  ASSERT_THAT(stale, HasErrorKind(ErrorKind::kConflict));
  std::optional<ConflictInfo> conflict = GetConflict(stale);
  ASSERT_TRUE(conflict.has_value());
  EXPECT_EQ(conflict->expected, new_lease.lease.token);
  EXPECT_EQ(conflict->actual, old_lease.lease.token);
  ASSERT_OK_AND_ASSIGN(GroupInfo info, groups().Describe("stale", "g"));
  EXPECT_EQ(info.cursor.sequence, 0u) << "a refused commit must not move the cursor";
  EXPECT_OK(groups().Commit("stale", "g", new_lease.lease.to, new_lease.lease.token));
}

TEST_P(GroupConformanceTest, ExpiredLeaseWithoutNewerGrantMayStillCommit) {
  ASSERT_OK(PublishN(bus(), "slow", 2).status());
  ASSERT_OK_AND_ASSIGN(ConsumePage page, groups().Consume(Request("slow", "g")));
  clock().Advance(kLease * 3);
  ASSERT_OK(groups().Commit("slow", "g", page.lease.to, page.lease.token));
  ASSERT_OK_AND_ASSIGN(GroupInfo info, groups().Describe("slow", "g"));
  EXPECT_EQ(info.cursor.sequence, 2u);
}

TEST_P(GroupConformanceTest, CommitsNeverMoveTheCursorBackwards) {
  ASSERT_OK(PublishN(bus(), "fwd", 6).status());
  ASSERT_OK_AND_ASSIGN(ConsumePage first, groups().Consume(Request("fwd", "g", 4)));
  ASSERT_OK(groups().Commit("fwd", "g", first.lease.to, first.lease.token));
  // Repeating the commit (a lost answer) or an earlier position is a no-op.
  EXPECT_OK(groups().Commit("fwd", "g", first.lease.to, first.lease.token));
  EXPECT_OK(groups().Commit("fwd", "g", Cursor::For("fwd", epoch(), 1), first.lease.token));
  ASSERT_OK_AND_ASSIGN(ConsumePage second, groups().Consume(Request("fwd", "g")));
  EXPECT_THAT(groups().Commit("fwd", "g", Cursor::For("fwd", epoch(), 2), second.lease.token),
              HasErrorKind(ErrorKind::kInvalidArgument));
  ASSERT_OK_AND_ASSIGN(GroupInfo info, groups().Describe("fwd", "g"));
  EXPECT_EQ(info.cursor.sequence, 4u);
}

TEST_P(GroupConformanceTest, CommitPastTheLeasedPageIsRefused) {
  ASSERT_OK(PublishN(bus(), "past", 4).status());
  ASSERT_OK_AND_ASSIGN(ConsumePage page, groups().Consume(Request("past", "g", 2)));
  EXPECT_THAT(groups().Commit("past", "g", Cursor::For("past", epoch(), 4), page.lease.token),
              HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(groups().Commit("past", "g", Cursor::For("other", epoch(), 2), page.lease.token),
              HasErrorKind(ErrorKind::kCursorMismatch));
}

TEST_P(GroupConformanceTest, TokensIncreaseWithEveryGrantAndSeek) {
  ASSERT_OK(PublishN(bus(), "tok", 5).status());
  uint64_t previous = 0;
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK_AND_ASSIGN(ConsumePage page, groups().Consume(Request("tok", "g", 1)));
    EXPECT_GT(page.lease.token, previous);
    previous = page.lease.token;
    ASSERT_OK(groups().Commit("tok", "g", page.lease.to, page.lease.token));
  }
  ASSERT_OK(groups().Seek("tok", "g", Position::Earliest()));
  ASSERT_OK_AND_ASSIGN(ConsumePage page, groups().Consume(Request("tok", "g", 1)));
  EXPECT_GT(page.lease.token, previous + 1) << "a seek fences by using up a token";
}

TEST_P(GroupConformanceTest, SeekFencesTheCurrentLease) {
  ASSERT_OK(PublishN(bus(), "fence", 3).status());
  ASSERT_OK_AND_ASSIGN(ConsumePage page, groups().Consume(Request("fence", "g")));
  ASSERT_OK(groups().Seek("fence", "g", Position::After(Cursor::For("fence", epoch(), 1))));
  EXPECT_THAT(groups().Commit("fence", "g", page.lease.to, page.lease.token),
              HasErrorKind(ErrorKind::kConflict));
  // The seek also ended the lease: the next consume is served at once.
  ASSERT_OK_AND_ASSIGN(ConsumePage after, groups().Consume(Request("fence", "g")));
  EXPECT_THAT(Sequences(after.events), ElementsAre(2, 3));
}

TEST_P(GroupConformanceTest, SeekToEarliestLatestAndCursor) {
  ASSERT_OK(PublishN(bus(), "seek", 4).status());
  ASSERT_OK(groups().Seek("seek", "g", Position::Latest()));
  ASSERT_OK_AND_ASSIGN(ConsumePage none, groups().Consume(Request("seek", "g")));
  EXPECT_THAT(none.events, IsEmpty());
  ASSERT_OK(groups().Seek("seek", "g", Position::After(Cursor::For("seek", epoch(), 2))));
  ASSERT_OK_AND_ASSIGN(ConsumePage tail, groups().Consume(Request("seek", "g")));
  EXPECT_THAT(Sequences(tail.events), ElementsAre(3, 4));
  ASSERT_OK(groups().Seek("seek", "g", Position::Earliest()));
  ASSERT_OK_AND_ASSIGN(ConsumePage all, groups().Consume(Request("seek", "g")));
  EXPECT_THAT(Sequences(all.events), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(groups().Seek("seek", "g", Position::After(Cursor::For("seek", epoch(), 9))),
              HasErrorKind(ErrorKind::kCursorMismatch));
}

TEST_P(GroupConformanceTest, SeekToTimeStartsAtTheFirstEventPublishedThen) {
  ASSERT_OK(PublishN(bus(), "timed", 2).status());
  clock().Advance(absl::Minutes(1));
  const absl::Time noon = clock().Now();
  ASSERT_OK(PublishN(bus(), "timed", 2).status());
  ASSERT_OK(groups().SeekToTime("timed", "g", noon));
  ASSERT_OK_AND_ASSIGN(ConsumePage page, groups().Consume(Request("timed", "g")));
  EXPECT_THAT(Sequences(page.events), ElementsAre(3, 4));
  ASSERT_OK(groups().SeekToTime("timed", "g", noon + absl::Hours(1)));
  ASSERT_OK_AND_ASSIGN(GroupInfo info, groups().Describe("timed", "g"));
  EXPECT_EQ(info.cursor.sequence, 4u);
}

TEST_P(GroupConformanceTest, DescribeAndListReportCursorAndLag) {
  ASSERT_OK(PublishN(bus(), "lag", 5).status());
  ASSERT_OK(PublishN(bus(), "lag2", 1).status());
  EXPECT_THAT(groups().Describe("lag", "nobody"), HasErrorKind(ErrorKind::kNotFound));
  ASSERT_OK_AND_ASSIGN(ConsumePage page, groups().Consume(Request("lag", "b", 2)));
  ASSERT_OK(groups().Commit("lag", "b", page.lease.to, page.lease.token));
  ASSERT_OK(groups().Seek("lag", "a", Position::Earliest()));
  ASSERT_OK(groups().Seek("lag2", "a", Position::Latest()));
  ASSERT_OK_AND_ASSIGN(std::vector<GroupInfo> of_lag, groups().List("lag"));
  ASSERT_EQ(of_lag.size(), 2u);
  EXPECT_EQ(of_lag[0].group, "a");
  EXPECT_EQ(of_lag[0].lag, 5u);
  EXPECT_EQ(of_lag[1].group, "b");
  EXPECT_EQ(of_lag[1].lag, 3u);
  EXPECT_EQ(of_lag[1].cursor, Cursor::For("lag", epoch(), 2));
  ASSERT_OK_AND_ASSIGN(std::vector<GroupInfo> all, groups().List(""));
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[2].stream, "lag2");
  EXPECT_EQ(all[2].lag, 0u);
}

TEST_P(GroupConformanceTest, RejectsBadNamesLimitsAndLeases) {
  ConsumeRequest request = Request("s", "bad group");
  EXPECT_THAT(groups().Consume(request), HasErrorKind(ErrorKind::kInvalidArgument));
  request = Request("s", "g", 0);
  EXPECT_THAT(groups().Consume(request), HasErrorKind(ErrorKind::kInvalidArgument));
  request = Request("s", "g", kMaxReplayLimit + 1);
  EXPECT_THAT(groups().Consume(request), HasErrorKind(ErrorKind::kInvalidArgument));
  request = Request("s", "g");
  request.lease = absl::ZeroDuration();
  EXPECT_THAT(groups().Consume(request), HasErrorKind(ErrorKind::kInvalidArgument));
  request.lease = kMaxLease + absl::Seconds(1);
  EXPECT_THAT(groups().Consume(request), HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(groups().Commit("s", "nobody", Cursor::For("s", epoch(), 0), 1),
              HasErrorKind(ErrorKind::kNotFound));
  // Group names may contain ':' (HTTP splits the action at the last one).
  EXPECT_OK(groups().Consume(Request("s", "team:billing")).status());
}

}  // namespace
}  // namespace keel::conformance
