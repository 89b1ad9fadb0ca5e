// The fixture, target helpers and the force-link hook of the suite.
#include "keel/tests/conformance/conformance.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "keel/core/driver_factory.h"
#include "keel/drivers/builtin_drivers.h"
#include "keel/tests/conformance/helpers.h"

namespace keel::conformance {

Target DriverTarget(std::string label, std::string driver, Config options, std::string dir_option,
                    std::string retention_option) {
  Target target;
  target.label = std::move(label);
  target.driver = std::move(driver);
  auto base = [options = std::move(options), dir_option](const std::string& dir) {
    Config config = options;
    if (!dir_option.empty()) config.Set(dir_option, dir);
    return config;
  };
  target.config = base;
  if (!retention_option.empty()) {
    target.retention_config = [base, key = std::move(retention_option)](const std::string& dir,
                                                                        uint64_t max_events) {
      Config config = base(dir);
      config.Set(key, absl::StrCat(max_events));
      return config;
    };
  }
  return target;
}

void ForceLink() {
  LinkBuiltinDrivers();
  LinkSequenceTests();
  LinkPublishTests();
  LinkReplayTests();
  LinkCursorTests();
  LinkFollowTests();
  LinkOverflowTests();
  LinkCloseTests();
  LinkRetentionTests();
  LinkPolicyTests();
  LinkRetentionPolicyTests();
  LinkGroupTests();
  LinkGroupRaceTests();
  LinkProcessTests();
  LinkGroupRetentionTests();
  LinkDeletionTests();
}

std::vector<Target> AllTargets(std::vector<Target> targets) { return targets; }

std::vector<Target> RetentionTargets(std::vector<Target> targets) {
  std::vector<Target> out;
  for (Target& target : targets) {
    if (target.retention_config) out.push_back(std::move(target));
  }
  return out;
}

std::vector<Target> RetentionPolicyTargets(std::vector<Target> targets) {
  std::vector<Target> out;
  for (Target& target : targets) {
    if (target.retention_policies) out.push_back(std::move(target));
  }
  return out;
}

std::string TargetName(const ::testing::TestParamInfo<Target>& info) { return info.param.label; }

void PrintTo(const Target& target, std::ostream* os) {
  *os << target.label << " (driver '" << target.driver << "')";
}

void ConformanceTest::SetUp() {
  ForceLink();
  static std::atomic<int> counter{0};
  // Fresh per test and per process, so parallel test runs never share data.
  std::filesystem::path path =
      std::filesystem::path(::testing::TempDir()) /
      absl::StrCat("keel-conformance-", getpid(), "-", counter.fetch_add(1));
  std::filesystem::remove_all(path);
  std::filesystem::create_directories(path);
  dir_ = path.string();

  DriverContext context;
  if (UsesManualClock()) context.clock = &clock_;
  absl::StatusOr<std::unique_ptr<EventBus>> bus =
      CreateBus(GetParam().driver, BusConfig(dir_), context);
  ASSERT_TRUE(bus.ok()) << "cannot open driver '" << GetParam().driver << "': " << bus.status();
  bus_ = *std::move(bus);
  ASSERT_NE(bus_->replayer(), nullptr) << "the conformance suite needs a driver that keeps history";
}

void ConformanceTest::TearDown() {
  if (bus_ != nullptr) {
    EXPECT_TRUE(bus_->Close().ok());
    bus_.reset();  // Before the directory goes: the driver may still hold files.
  }
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

Config ConformanceTest::BusConfig(const std::string& dir) const { return GetParam().config(dir); }

Config RetentionConformanceTest::BusConfig(const std::string& dir) const {
  return GetParam().retention_config(dir, kRetainedEvents);
}

}  // namespace keel::conformance
