// Without a store the durable driver degrades loudly: a warning in the log, a
// runtime.warning event on keel.runtime, a DegradedReason, and memory-ring
// behaviour otherwise.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "keel/core/driver_factory.h"
#include "keel/core/logger.h"
#include "keel/drivers/builtin_drivers.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::testing {
namespace {

using ::testing::HasSubstr;

TEST(DegradedModeTest, NoStoreWarnsLogsAndPublishesRuntimeWarning) {
  LinkBuiltinDrivers();
  auto logger = std::make_shared<CapturingLogger>();
  DriverContext context;
  context.logger = logger;
  ASSERT_OK_AND_ASSIGN(auto bus, CreateBus("durable", Config{}, context));

  EXPECT_TRUE(logger->Contains(LogLevel::kWarn, "no store configured"));
  EXPECT_THAT(bus->DegradedReason(), HasSubstr("memory ring"));

  ASSERT_OK_AND_ASSIGN(auto follower, bus->Follow("keel.runtime", Position::Earliest()));
  ASSERT_OK_AND_ASSIGN(auto events, follower->Next(10, absl::Seconds(10)));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]->type, "runtime.warning");
  EXPECT_THAT(events[0]->payload, HasSubstr("no store configured"));

  Event event;
  event.stream = "orders";
  event.type = "order.created";
  ASSERT_OK_AND_ASSIGN(Receipt receipt, bus->Publish(event));
  EXPECT_EQ(receipt.sequence, 1u);
}

TEST(DegradedModeTest, ConfiguredStoreIsNotDegraded) {
  LinkBuiltinDrivers();
  ASSERT_OK_AND_ASSIGN(auto bus, CreateBus("durable", Config{{"store", "memory"}}));
  EXPECT_EQ(bus->DegradedReason(), "");
  ASSERT_OK_AND_ASSIGN(StreamInfo info, bus->replayer()->Bounds("keel.runtime"));
  EXPECT_EQ(info.count, 0u);
}

TEST(DegradedModeTest, BadOptionsAreRejectedWithTheirName) {
  LinkBuiltinDrivers();
  EXPECT_THAT(CreateBus("durable", Config{{"store", "memory"}, {"sync", "sometimes"}}),
              HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(CreateBus("durable", Config{{"store", "nosuchstore"}}),
              HasErrorKind(ErrorKind::kNotFound));
}

}  // namespace
}  // namespace keel::testing
