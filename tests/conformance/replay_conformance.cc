// Replay: reading history strictly after a position, up to an inclusive
// `until`, in pages, with tenant and type filters applied by the driver;
// Bounds and ListStreams; cursor tokens as a client round-trips them.
#include <gmock/gmock.h>

#include <algorithm>
#include <string>
#include <vector>

#include "keel/core/errors.h"
#include "keel/tests/conformance/conformance.h"
#include "keel/tests/conformance/helpers.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::conformance {

void LinkReplayTests() {}

namespace {

using ::keel::testing::HasErrorKind;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::IsSupersetOf;

ReplayRequest Request(absl::string_view stream, Position after, size_t limit = 100) {
  ReplayRequest request;
  request.stream = std::string(stream);
  request.after = after;
  request.limit = limit;
  return request;
}

std::vector<std::string> Names(const std::vector<StreamInfo>& infos) {
  std::vector<std::string> names;
  for (const StreamInfo& info : infos) names.push_back(info.stream);
  return names;
}

TEST_P(ReplayConformanceTest, FromEarliestReturnsEverythingInOrder) {
  ASSERT_OK_AND_ASSIGN(std::vector<Receipt> receipts, PublishN(bus(), "r", 10));
  ASSERT_OK_AND_ASSIGN(ReplayPage page, replayer().Replay(Request("r", Position::Earliest())));
  EXPECT_EQ(Sequences(page.events), Range(1, 10));
  for (size_t i = 0; i < page.events.size(); ++i) {
    EXPECT_EQ(page.events[i].payload, "e-" + std::to_string(i));
    EXPECT_EQ(page.events[i].id, receipts[i].id);
  }
  EXPECT_TRUE(page.reached_end);
  EXPECT_EQ(page.head_sequence, 10u);
  EXPECT_EQ(page.next, receipts.back().cursor);
}

TEST_P(ReplayConformanceTest, AfterCursorIsStrictlyAfter) {
  ASSERT_OK_AND_ASSIGN(std::vector<Receipt> receipts, PublishN(bus(), "r", 10));
  ASSERT_OK_AND_ASSIGN(ReplayPage page,
                       replayer().Replay(Request("r", Position::After(receipts[4].cursor))));
  EXPECT_EQ(Sequences(page.events), Range(6, 10));
  EXPECT_TRUE(page.reached_end);
}

TEST_P(ReplayConformanceTest, AfterHeadAndAfterLatestAreEmpty) {
  ASSERT_OK_AND_ASSIGN(std::vector<Receipt> receipts, PublishN(bus(), "r", 3));
  for (const Position& after : {Position::Latest(), Position::After(receipts.back().cursor)}) {
    SCOPED_TRACE(after.ToString());
    ASSERT_OK_AND_ASSIGN(ReplayPage page, replayer().Replay(Request("r", after)));
    EXPECT_THAT(page.events, IsEmpty());
    EXPECT_TRUE(page.reached_end);
    EXPECT_EQ(page.next.sequence, 3u);
  }
}

TEST_P(ReplayConformanceTest, UnwrittenStreamIsEmpty) {
  ASSERT_OK_AND_ASSIGN(ReplayPage page, replayer().Replay(Request("never", Position::Earliest())));
  EXPECT_THAT(page.events, IsEmpty());
  EXPECT_TRUE(page.reached_end);
  EXPECT_EQ(page.head_sequence, 0u);
}

TEST_P(ReplayConformanceTest, UntilIsInclusive) {
  ASSERT_OK_AND_ASSIGN(std::vector<Receipt> receipts, PublishN(bus(), "r", 10));
  ReplayRequest request = Request("r", Position::After(receipts[1].cursor));
  request.until = receipts[6].cursor;
  ASSERT_OK_AND_ASSIGN(ReplayPage page, replayer().Replay(request));
  EXPECT_EQ(Sequences(page.events), Range(3, 7));
  EXPECT_TRUE(page.reached_end) << "reaching `until` is the end of this replay";
  EXPECT_EQ(page.next.sequence, 7u);
}

TEST_P(ReplayConformanceTest, UntilTheStartPositionIsEmpty) {
  ASSERT_OK_AND_ASSIGN(std::vector<Receipt> receipts, PublishN(bus(), "r", 5));
  ReplayRequest request = Request("r", Position::After(receipts[2].cursor));
  request.until = receipts[2].cursor;
  ASSERT_OK_AND_ASSIGN(ReplayPage page, replayer().Replay(request));
  EXPECT_THAT(page.events, IsEmpty());
  EXPECT_TRUE(page.reached_end);
}

TEST_P(ReplayConformanceTest, LimitPagesWithNextUntilReachedEnd) {
  ASSERT_OK(PublishN(bus(), "paged", 25));
  std::vector<std::vector<uint64_t>> pages;
  ReplayRequest request = Request("paged", Position::Earliest(), 10);
  for (int i = 0; i < 10; ++i) {
    ASSERT_OK_AND_ASSIGN(ReplayPage page, replayer().Replay(request));
    pages.push_back(Sequences(page.events));
    if (page.reached_end) break;
    ASSERT_FALSE(pages.back().empty()) << "a page short of the end returns `limit` events";
    EXPECT_EQ(page.next.sequence, pages.back().back());
    // Resume the way a client does: from the printed token.
    ASSERT_OK_AND_ASSIGN(request.after, Position::Parse(page.next.Encode()));
  }
  EXPECT_THAT(pages, ElementsAre(Range(1, 10), Range(11, 20), Range(21, 25)));
}

TEST_P(ReplayConformanceTest, LimitOutsideOneToMaxIsRejected) {
  ASSERT_OK(PublishN(bus(), "r", 1));
  EXPECT_THAT(replayer().Replay(Request("r", Position::Earliest(), 0)),
              HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(replayer().Replay(Request("r", Position::Earliest(), kMaxReplayLimit + 1)),
              HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_OK(replayer().Replay(Request("r", Position::Earliest(), kMaxReplayLimit)));
}

TEST_P(ReplayConformanceTest, InvalidStreamNameIsRejected) {
  EXPECT_THAT(replayer().Replay(Request("bad name", Position::Earliest())),
              HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(replayer().Bounds("bad/name"), HasErrorKind(ErrorKind::kInvalidArgument));
}

TEST_P(ReplayConformanceTest, TenantFilterReturnsOnlyThatTenant) {
  const std::vector<std::string> tenants = {"acme", "globex", "", "acme", "globex", "acme"};
  for (const std::string& tenant : tenants) {
    Event event = MakeEvent("tenants");
    event.tenant = tenant;
    ASSERT_OK(bus().Publish(event));
  }
  ReplayRequest request = Request("tenants", Position::Earliest());
  request.filter.tenant = "acme";
  ASSERT_OK_AND_ASSIGN(ReplayPage page, replayer().Replay(request));
  EXPECT_THAT(Sequences(page.events), ElementsAre(1, 4, 6));
  for (const Event& event : page.events) EXPECT_EQ(event.tenant, "acme");
}

TEST_P(ReplayConformanceTest, TypePrefixFilterMatchesPrefixOnly) {
  for (const char* type : {"order.created", "user.created", "order.paid", "orders.archived"}) {
    ASSERT_OK(bus().Publish(MakeEvent("types", type)));
  }
  ReplayRequest request = Request("types", Position::Earliest());
  request.filter.type_prefix = "order.";
  ASSERT_OK_AND_ASSIGN(ReplayPage page, replayer().Replay(request));
  EXPECT_THAT(Sequences(page.events), ElementsAre(1, 3));
}

TEST_P(ReplayConformanceTest, TenantAndTypeFiltersCombine) {
  for (auto [tenant, type] : std::vector<std::pair<std::string, std::string>>{
           {"acme", "order.created"}, {"acme", "user.created"}, {"globex", "order.created"}}) {
    Event event = MakeEvent("both", type);
    event.tenant = tenant;
    ASSERT_OK(bus().Publish(event));
  }
  ReplayRequest request = Request("both", Position::Earliest());
  request.filter.tenant = "acme";
  request.filter.type_prefix = "order";
  ASSERT_OK_AND_ASSIGN(ReplayPage page, replayer().Replay(request));
  EXPECT_THAT(Sequences(page.events), ElementsAre(1));
}

TEST_P(ReplayConformanceTest, NextAdvancesPastFilteredOutEvents) {
  ASSERT_OK(PublishN(bus(), "filtered", 10));  // All of type "test.event".
  ReplayRequest request = Request("filtered", Position::Earliest());
  request.filter.type_prefix = "nothing.matches";
  ASSERT_OK_AND_ASSIGN(ReplayPage page, replayer().Replay(request));
  EXPECT_THAT(page.events, IsEmpty());
  EXPECT_TRUE(page.reached_end);
  EXPECT_EQ(page.next.sequence, 10u) << "a reader must not rescan skipped events";
}

TEST_P(ReplayConformanceTest, FilteredPagingReturnsEveryMatchOnce) {
  // Every third event matches; small pages must neither lose nor repeat one.
  for (int i = 1; i <= 30; ++i) {
    ASSERT_OK(bus().Publish(MakeEvent("sparse", i % 3 == 0 ? "hit" : "miss")));
  }
  ReplayRequest request = Request("sparse", Position::Earliest(), 2);
  request.filter.type_prefix = "hit";
  ASSERT_OK_AND_ASSIGN(std::vector<Event> events, ReplayAll(replayer(), request));
  std::vector<uint64_t> expected;
  for (uint64_t s = 3; s <= 30; s += 3) expected.push_back(s);
  EXPECT_EQ(Sequences(events), expected);
}

TEST_P(ReplayConformanceTest, BoundsOfUnwrittenStream) {
  ASSERT_OK_AND_ASSIGN(StreamInfo info, replayer().Bounds("never"));
  EXPECT_EQ(info.stream, "never");
  EXPECT_EQ(info.first_sequence, 1u);
  EXPECT_EQ(info.last_sequence, 0u);
  EXPECT_EQ(info.count, 0u);
  EXPECT_EQ(info.head.sequence, 0u);
  EXPECT_OK(info.head.CheckBelongsTo("never", epoch()));
}

TEST_P(ReplayConformanceTest, BoundsReportFirstLastAndCount) {
  ASSERT_OK_AND_ASSIGN(std::vector<Receipt> receipts, PublishN(bus(), "bounded", 7));
  ASSERT_OK_AND_ASSIGN(StreamInfo info, replayer().Bounds("bounded"));
  EXPECT_EQ(info.stream, "bounded");
  EXPECT_EQ(info.first_sequence, 1u);
  EXPECT_EQ(info.last_sequence, 7u);
  EXPECT_EQ(info.count, 7u);
  EXPECT_GT(info.bytes, 0u);
  EXPECT_NE(info.oldest_time, absl::InfinitePast());
  EXPECT_EQ(info.head, receipts.back().cursor);
}

TEST_P(ReplayConformanceTest, ListStreamsByPrefixIsSorted) {
  // Under a common prefix: some drivers keep streams of their own.
  for (const char* stream : {"ls.b.x", "ls.a.2", "ls.a.1", "ls.a.10", "ls.c", "ls.ab"}) {
    ASSERT_OK(bus().Publish(MakeEvent(stream)));
  }
  ASSERT_OK(bus().Publish(MakeEvent("ls.a.1")));
  ASSERT_OK_AND_ASSIGN(std::vector<StreamInfo> a, replayer().ListStreams("ls.a.", 100));
  EXPECT_THAT(Names(a), ElementsAre("ls.a.1", "ls.a.10", "ls.a.2"));
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0].last_sequence, 2u);
  EXPECT_EQ(a[0].count, 2u);
  EXPECT_EQ(a[1].last_sequence, 1u);

  ASSERT_OK_AND_ASSIGN(std::vector<StreamInfo> ls, replayer().ListStreams("ls.", 100));
  EXPECT_THAT(Names(ls), ElementsAre("ls.a.1", "ls.a.10", "ls.a.2", "ls.ab", "ls.b.x", "ls.c"));
  ASSERT_OK_AND_ASSIGN(std::vector<StreamInfo> limited, replayer().ListStreams("ls.", 2));
  EXPECT_THAT(Names(limited), ElementsAre("ls.a.1", "ls.a.10"));
  ASSERT_OK_AND_ASSIGN(std::vector<StreamInfo> none, replayer().ListStreams("zzz", 100));
  EXPECT_THAT(none, IsEmpty());

  ASSERT_OK_AND_ASSIGN(std::vector<StreamInfo> all, replayer().ListStreams("", 1000));
  std::vector<std::string> names = Names(all);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_THAT(names, IsSupersetOf(Names(ls)));
}

TEST_P(ReplayConformanceTest, ReceiptCursorTokenRoundTrips) {
  ASSERT_OK_AND_ASSIGN(std::vector<Receipt> receipts, PublishN(bus(), "tokens", 6));
  const std::string token = receipts[2].cursor.Encode();
  EXPECT_EQ(token.size(), 36u);
  ASSERT_OK_AND_ASSIGN(Cursor decoded, Cursor::Decode(token));
  EXPECT_EQ(decoded, receipts[2].cursor);
  ASSERT_OK_AND_ASSIGN(Position position, Position::Parse(token));
  EXPECT_EQ(position.kind, Position::Kind::kCursor);
  EXPECT_EQ(position.cursor, receipts[2].cursor);
  EXPECT_EQ(position.ToString(), token);

  ASSERT_OK_AND_ASSIGN(ReplayPage page, replayer().Replay(Request("tokens", position)));
  EXPECT_EQ(Sequences(page.events), Range(4, 6));
}

TEST_P(ReplayConformanceTest, SymbolicPositionsParseAndResolve) {
  ASSERT_OK(PublishN(bus(), "symbolic", 4));
  ASSERT_OK_AND_ASSIGN(Position earliest, Position::Parse("earliest"));
  ASSERT_OK_AND_ASSIGN(Position latest, Position::Parse("latest"));
  EXPECT_EQ(earliest.kind, Position::Kind::kEarliest);
  EXPECT_EQ(latest.kind, Position::Kind::kLatest);
  EXPECT_EQ(earliest.ToString(), "earliest");
  EXPECT_EQ(latest.ToString(), "latest");

  ASSERT_OK_AND_ASSIGN(ReplayPage from_earliest, replayer().Replay(Request("symbolic", earliest)));
  EXPECT_EQ(Sequences(from_earliest.events), Range(1, 4));
  ASSERT_OK_AND_ASSIGN(ReplayPage from_latest, replayer().Replay(Request("symbolic", latest)));
  EXPECT_THAT(from_latest.events, IsEmpty());
}

}  // namespace
}  // namespace keel::conformance
