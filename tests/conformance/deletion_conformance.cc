// Stream deletion (EventBus::DeleteStream): a deleted stream's events,
// keys, groups, declaration and dead letters are gone; a stream of the same
// name afterwards is a new incarnation that old cursors never read into.
// A driver that cannot delete says so (kUnimplemented) and keeps everything.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "keel/core/errors.h"
#include "keel/tests/conformance/conformance.h"
#include "keel/tests/conformance/helpers.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::conformance {

void LinkDeletionTests() {}

namespace {

using ::keel::testing::HasErrorKind;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Whether the bus deletes streams; when it does not, checks that asking
// for it changes nothing a reader sees.
bool DeletesStreams(EventBus& bus) {
  if (!PublishN(bus, "probe", 2).ok()) return false;
  absl::StatusOr<DeletionReport> deleted = bus.DeleteStream("probe");
  if (deleted.ok()) return true;
  EXPECT_EQ(deleted.status().code(), absl::StatusCode::kUnimplemented) << deleted.status();
  absl::StatusOr<std::vector<Event>> kept = ReplayStream(*bus.replayer(), "probe");
  EXPECT_TRUE(kept.ok() && kept->size() == 2) << "a refused deletion lost events";
  return false;
}

// The streams listed, but the bus's own (a degraded bus reports on
// "keel.runtime").
std::vector<std::string> Listed(Replayer& replayer) {
  std::vector<std::string> names;
  absl::StatusOr<std::vector<StreamInfo>> streams = replayer.ListStreams("", 1000);
  EXPECT_TRUE(streams.ok()) << streams.status();
  if (streams.ok()) {
    for (const StreamInfo& info : *streams) {
      if (!absl::StartsWith(info.stream, "keel.")) names.push_back(info.stream);
    }
  }
  return names;
}

ReplayRequest After(absl::string_view stream, const Cursor& cursor) {
  ReplayRequest request;
  request.stream = std::string(stream);
  request.after = Position::After(cursor);
  return request;
}

TEST_P(DeletionConformanceTest, DeletedStreamIsGoneAndANewOneStartsAfterIt) {
  if (!DeletesStreams(bus())) return;
  ASSERT_OK_AND_ASSIGN(std::vector<Receipt> old, PublishN(bus(), "orders", 5));
  ASSERT_OK(PublishN(bus(), "other", 1).status());
  ASSERT_OK_AND_ASSIGN(DeletionReport report, bus().DeleteStream("orders"));
  EXPECT_THAT(report.streams, ElementsAre("orders"));
  EXPECT_EQ(report.events, 5u);
  EXPECT_THAT(Listed(replayer()), ElementsAre("other"));
  ASSERT_OK_AND_ASSIGN(std::vector<Event> none, ReplayStream(replayer(), "orders"));
  EXPECT_THAT(none, IsEmpty());

  ASSERT_OK_AND_ASSIGN(std::vector<Receipt> fresh, PublishN(bus(), "orders", 2));
  EXPECT_GT(fresh[0].sequence, old.back().sequence);
  ASSERT_OK_AND_ASSIGN(std::vector<Event> replayed, ReplayStream(replayer(), "orders"));
  EXPECT_EQ(Sequences(replayed), Sequences(fresh));
  ASSERT_OK_AND_ASSIGN(StreamInfo info, replayer().Bounds("orders"));
  EXPECT_EQ(info.count, 2u);
  EXPECT_EQ(info.first_sequence, fresh[0].sequence);
  // The new incarnation's cursors work, from before its first event on.
  ASSERT_OK_AND_ASSIGN(ReplayPage page, replayer().Replay(After("orders", fresh[0].cursor)));
  EXPECT_THAT(Sequences(page.events), ElementsAre(fresh[1].sequence));
  ASSERT_OK_AND_ASSIGN(
      ReplayPage from_start,
      replayer().Replay(After("orders", Cursor::For("orders", epoch(), fresh[0].sequence - 1))));
  EXPECT_EQ(Sequences(from_start.events), Sequences(fresh));
}

TEST_P(DeletionConformanceTest, CursorsOfTheDeletedStreamAreMismatches) {
  if (!DeletesStreams(bus())) return;
  ASSERT_OK_AND_ASSIGN(std::vector<Receipt> old, PublishN(bus(), "orders", 5));
  ASSERT_OK(bus().DeleteStream("orders").status());
  ASSERT_OK(PublishN(bus(), "orders", 3).status());
  for (const Receipt& receipt : {old[0], old[2], old[4]}) {
    EXPECT_THAT(replayer().Replay(After("orders", receipt.cursor)),
                HasErrorKind(ErrorKind::kCursorMismatch))
        << "replay after old sequence " << receipt.sequence;
    EXPECT_THAT(bus().Follow("orders", Position::After(receipt.cursor)),
                HasErrorKind(ErrorKind::kCursorMismatch))
        << "follow after old sequence " << receipt.sequence;
  }
}

TEST_P(DeletionConformanceTest, AFollowerOfTheDeletedStreamNeverGetsTheNewOnesEvents) {
  if (!DeletesStreams(bus())) return;
  ASSERT_OK(PublishN(bus(), "orders", 3).status());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Subscription> follower,
                       bus().Follow("orders", Position::Earliest()));
  ReadResult before = ReadThrough(*follower, 3);
  ASSERT_OK(before.status);
  ASSERT_THAT(Sequences(before.events), ElementsAre(1, 2, 3));
  ASSERT_OK(bus().DeleteStream("orders").status());
  ASSERT_OK(PublishN(bus(), "orders", 2).status());
  ReadResult after = ReadToError(*follower);
  EXPECT_THAT(after.events, IsEmpty());
  EXPECT_THAT(after.status, HasErrorKind(ErrorKind::kCursorMismatch));
}

TEST_P(DeletionConformanceTest, GroupsDeclarationKeysAndDeadLettersGoWithTheStream) {
  if (!DeletesStreams(bus())) return;
  absl::StatusOr<StreamPolicy> policy = StreamPolicy::Parse("dedupe_window=1h");
  ASSERT_OK(policy.status());
  ASSERT_OK(bus().Declare("orders", *policy));
  Event keyed = MakeEvent("orders");
  keyed.idempotency_key = "k1";
  ASSERT_OK(bus().Publish(keyed).status());
  ASSERT_OK(PublishN(bus(), "orders.dlq", 1).status());
  ConsumeRequest request;
  request.stream = "orders";
  request.group = "billing";
  ASSERT_OK_AND_ASSIGN(ConsumePage page, bus().groups()->Consume(request));
  ASSERT_OK(bus().groups()->Commit("orders", "billing", page.lease.to, page.lease.token));

  ASSERT_OK_AND_ASSIGN(DeletionReport report, bus().DeleteStream("orders"));
  EXPECT_THAT(report.streams, ElementsAre("orders", "orders.dlq"));
  EXPECT_EQ(report.events, 2u);
  EXPECT_EQ(report.groups, 1u);
  ASSERT_OK_AND_ASSIGN(std::vector<StreamDeclaration> declared, bus().Declarations());
  for (const StreamDeclaration& declaration : declared) EXPECT_NE(declaration.stream, "orders");
  ASSERT_OK_AND_ASSIGN(std::vector<GroupInfo> groups, bus().groups()->List("orders"));
  EXPECT_THAT(groups, IsEmpty());
  EXPECT_THAT(Listed(replayer()), ElementsAre());
  // The key names the deleted incarnation's event: no duplicate now.
  ASSERT_OK_AND_ASSIGN(Receipt again, bus().Publish(keyed));
  EXPECT_FALSE(again.duplicate);
}

TEST_P(DeletionConformanceTest, DeletingATopicDeletesItsPartitions) {
  if (!DeletesStreams(bus())) return;
  absl::StatusOr<StreamPolicy> policy = StreamPolicy::Parse("partitions=2");
  ASSERT_OK(policy.status());
  ASSERT_OK(bus().Declare("clicks", *policy));
  ASSERT_OK(PublishN(bus(), "clicks:0", 2).status());
  ASSERT_OK(PublishN(bus(), "clicks:1", 3).status());
  ASSERT_OK_AND_ASSIGN(DeletionReport report, bus().DeleteStream("clicks"));
  EXPECT_THAT(report.streams, ElementsAre("clicks", "clicks:0", "clicks:1"));
  EXPECT_EQ(report.events, 5u);
  EXPECT_THAT(Listed(replayer()), ElementsAre());
  ASSERT_OK_AND_ASSIGN(std::vector<StreamDeclaration> declared, bus().Declarations());
  EXPECT_THAT(declared, IsEmpty());
}

TEST_P(DeletionConformanceTest, NothingToDeleteIsNotFound) {
  if (!DeletesStreams(bus())) return;
  EXPECT_THAT(bus().DeleteStream("never"), HasErrorKind(ErrorKind::kNotFound));
  ASSERT_OK(PublishN(bus(), "once", 1).status());
  ASSERT_OK(bus().DeleteStream("once").status());
  EXPECT_THAT(bus().DeleteStream("once"), HasErrorKind(ErrorKind::kNotFound));
  EXPECT_THAT(bus().DeleteStream("bad name"), HasErrorKind(ErrorKind::kInvalidArgument));
}

}  // namespace
}  // namespace keel::conformance
