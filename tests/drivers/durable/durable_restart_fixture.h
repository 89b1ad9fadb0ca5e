// A fixture for tests of what a durable bus keeps across a restart: each
// Open() opens the durable driver over the same LevelDB directory, on a
// ManualClock the test moves, so a test opens, closes and reopens it.
#ifndef KEEL_TESTS_DRIVERS_DURABLE_DURABLE_RESTART_FIXTURE_H_
#define KEEL_TESTS_DRIVERS_DURABLE_DURABLE_RESTART_FIXTURE_H_

#include <gtest/gtest.h>

#include <memory>

#include "keel/core/clock.h"
#include "keel/core/driver_factory.h"
#include "keel/core/event_bus.h"
#include "keel/drivers/builtin_drivers.h"
#include "keel/tests/testing/status_matchers.h"
#include "keel/tests/testing/temp_dir.h"

namespace keel::testing {

class DurableRestartTest : public ::testing::Test {
 protected:
  std::unique_ptr<EventBus> Open() {
    LinkBuiltinDrivers();
    Config config{{"store", "leveldb"}, {"store.path", dir_.Sub("db")}};
    DriverContext context;
    context.clock = &clock_;
    absl::StatusOr<std::unique_ptr<EventBus>> bus = CreateBus("durable", config, context);
    EXPECT_OK(bus);
    return bus.ok() ? std::move(*bus) : nullptr;
  }

  ManualClock clock_;
  TempDir dir_;
};

}  // namespace keel::testing

#endif  // KEEL_TESTS_DRIVERS_DURABLE_DURABLE_RESTART_FIXTURE_H_
