// A consumer group that retention overtook continues at the oldest retained
// event and is told how much it missed. Runs for targets with retention.
#include <gmock/gmock.h>

#include "keel/tests/conformance/conformance.h"
#include "keel/tests/conformance/helpers.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::conformance {

void LinkGroupRetentionTests() {}

namespace {

TEST_P(RetentionConformanceTest, GroupBehindRetentionContinuesAtOldestWithAGap) {
  ConsumerGroups* groups = bus().groups();
  ASSERT_NE(groups, nullptr) << "the conformance suite needs a driver with consumer groups";
  const ConsumeRequest request{"behind", "g", 100, absl::Minutes(1),
                               ConsumeRequest::Start::kEarliest};
  ASSERT_OK(PublishN(bus(), "behind", 1).status());
  ASSERT_OK_AND_ASSIGN(ConsumePage first, groups->Consume(request));
  ASSERT_OK(groups->Commit("behind", "g", first.lease.to, first.lease.token));
  ASSERT_OK(PublishN(bus(), "behind", 20).status());
  ASSERT_OK_AND_ASSIGN(StreamInfo info, replayer().Bounds("behind"));
  ASSERT_GT(info.first_sequence, 2u) << "retention should have trimmed events 2..";

  ASSERT_OK_AND_ASSIGN(ConsumePage page, groups->Consume(request));
  ASSERT_TRUE(page.gap.has_value());
  EXPECT_EQ(page.gap->requested_after, 1u);
  EXPECT_EQ(page.gap->oldest, info.first_sequence);
  EXPECT_EQ(Sequences(page.events), Range(info.first_sequence, 21));
  EXPECT_EQ(page.lease.from.sequence, info.first_sequence - 1);
  ASSERT_OK(groups->Commit("behind", "g", page.lease.to, page.lease.token));
  ASSERT_OK_AND_ASSIGN(GroupInfo described, groups->Describe("behind", "g"));
  EXPECT_EQ(described.cursor.sequence, 21u);
  EXPECT_EQ(described.lag, 0u);
}

}  // namespace
}  // namespace keel::conformance
