// Consumer groups of a durable bus survive a restart: the committed cursor,
// the token counter (tokens after the restart are larger than every token
// before it, so a pre-restart holder stays fenced) and a live lease.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "keel/core/errors.h"
#include "keel/tests/drivers/durable/durable_restart_fixture.h"
#include "keel/tests/drivers/durable/durable_test_util.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::testing {
namespace {

using ::testing::ElementsAre;

constexpr absl::Duration kLease = absl::Seconds(30);

class DurableGroupsRestartTest : public DurableRestartTest {
 protected:
  static ConsumeRequest Request(size_t limit) {
    return ConsumeRequest{"orders", "billing", limit, kLease, ConsumeRequest::Start::kEarliest};
  }
};

TEST_F(DurableGroupsRestartTest, CursorAndTokensSurviveARestart) {
  uint64_t token_before = 0;
  {
    std::unique_ptr<EventBus> bus = Open();
    for (int i = 0; i < 5; ++i) ASSERT_OK(bus->Publish(NewEvent("orders", i)));
    for (int i = 0; i < 2; ++i) {
      ASSERT_OK_AND_ASSIGN(ConsumePage page, bus->groups()->Consume(Request(2)));
      ASSERT_OK(bus->groups()->Commit("orders", "billing", page.lease.to, page.lease.token));
      token_before = page.lease.token;
    }
    ASSERT_OK(bus->Close());
  }
  std::unique_ptr<EventBus> bus = Open();
  ASSERT_OK_AND_ASSIGN(GroupInfo info, bus->groups()->Describe("orders", "billing"));
  EXPECT_EQ(info.cursor.sequence, 4u);
  EXPECT_EQ(info.lag, 1u);
  ASSERT_OK_AND_ASSIGN(ConsumePage page, bus->groups()->Consume(Request(10)));
  EXPECT_THAT(Sequences(page.events), ElementsAre(5));
  EXPECT_GT(page.lease.token, token_before);
}

TEST_F(DurableGroupsRestartTest, LiveLeaseAndFencingSurviveARestart) {
  ConsumePage held;
  {
    std::unique_ptr<EventBus> bus = Open();
    for (int i = 0; i < 3; ++i) ASSERT_OK(bus->Publish(NewEvent("orders", i)));
    ASSERT_OK_AND_ASSIGN(held, bus->groups()->Consume(Request(10)));
    ASSERT_OK(bus->Close());
  }
  std::unique_ptr<EventBus> bus = Open();
  ASSERT_OK_AND_ASSIGN(ConsumePage waiting, bus->groups()->Consume(Request(10)));
  ASSERT_TRUE(waiting.busy_until.has_value()) << "the lease granted before the restart is live";
  EXPECT_EQ(*waiting.busy_until, held.lease.expires);
  clock_.Advance(kLease);
  ASSERT_OK_AND_ASSIGN(ConsumePage redelivered, bus->groups()->Consume(Request(10)));
  EXPECT_THAT(Sequences(redelivered.events), ElementsAre(1, 2, 3));
  EXPECT_GT(redelivered.lease.token, held.lease.token);
  EXPECT_THAT(bus->groups()->Commit("orders", "billing", held.lease.to, held.lease.token),
              HasErrorKind(ErrorKind::kConflict));
}

}  // namespace
}  // namespace keel::testing
