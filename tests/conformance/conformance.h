// The Keel driver conformance suite: value-parameterized GoogleTest suites
// that every EventBus driver must pass.
//
// A host program (or Keel's own tests) describes how to open a fresh bus of
// its driver as a Target and instantiates every suite once, at global
// namespace scope in a test binary that links Keel::conformance and gtest_main:
//
//   #include "keel/tests/conformance/conformance.h"
//
//   KEEL_INSTANTIATE_CONFORMANCE(MyRing,
//       keel::conformance::DriverTarget("my_ring", "my-ring", {{"size", "64"}}));
//
// Each suite is named after its theme (SequenceConformanceTest,
// ReplayConformanceTest, ...), so `--gtest_filter='*Follow*'` selects one
// theme. Tests create one bus per test in a fresh directory, wait for events
// with generous timeouts and never assert on speed. They assume the default
// publish limits (128 KiB per event).
//
// Retention tests (RetentionConformanceTest) run only for targets that set
// `retention_config`; the macro filters the target list for them.
#ifndef KEEL_TESTS_CONFORMANCE_CONFORMANCE_H_
#define KEEL_TESTS_CONFORMANCE_CONFORMANCE_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "keel/core/clock.h"
#include "keel/core/config.h"
#include "keel/core/event_bus.h"

namespace keel::conformance {

struct Target {
  std::string label;   // Used in test names: [A-Za-z0-9_].
  std::string driver;  // Registered driver name.
  // Config for a fresh, empty bus. `dir` is a fresh empty directory owned by
  // the test (drivers that persist put their data there).
  std::function<Config(const std::string& dir)> config;
  // Optional: config for a bus that retains at most `max_events` per stream
  // (for retention-gap tests); empty when the driver has no retention.
  std::function<Config(const std::string& dir, uint64_t max_events)> retention_config;
  // Whether the driver enforces declared retention bounds (StreamPolicy) in
  // EventBus::Trim; RetentionPolicyConformanceTest runs only when it does.
  bool retention_policies = true;
};

// A Target for the common case of a driver configured by plain options:
// every bus gets `options`; `dir_option`, when set, names the option that
// receives the test's directory; `retention_option`, when set, names the
// option that receives `max_events` (and enables the retention tests).
Target DriverTarget(std::string label, std::string driver, Config options = {},
                    std::string dir_option = "", std::string retention_option = "");

// Referenced by KEEL_INSTANTIATE_CONFORMANCE so that a static link keeps every
// object file of the suite (and the built-in drivers).
void ForceLink();

// Parameter generators and the test-name generator used by the macro.
std::vector<Target> AllTargets(std::vector<Target> targets);
std::vector<Target> RetentionTargets(std::vector<Target> targets);
std::vector<Target> RetentionPolicyTargets(std::vector<Target> targets);
std::string TargetName(const ::testing::TestParamInfo<Target>& info);
// Prints a Target as its label in test output.
void PrintTo(const Target& target, std::ostream* os);

// The fixture shared by every suite: a fresh bus of the target's driver in a
// fresh directory, closed and removed after the test.
class ConformanceTest : public ::testing::TestWithParam<Target> {
 protected:
  void SetUp() override;
  void TearDown() override;

  // The config the bus of this test is opened with.
  virtual Config BusConfig(const std::string& dir) const;
  // Suites that control time return true: the bus then runs on clock().
  virtual bool UsesManualClock() const { return false; }

  EventBus& bus() { return *bus_; }
  ManualClock& clock() { return clock_; }
  Replayer& replayer() { return *bus_->replayer(); }
  uint64_t epoch() { return bus_->replayer()->epoch(); }

 private:
  std::string dir_;
  ManualClock clock_;
  std::unique_ptr<EventBus> bus_;
};

// One fixture per theme (see the .cc file of the same name).
class SequenceConformanceTest : public ConformanceTest {};
class PublishConformanceTest : public ConformanceTest {};
class ReplayConformanceTest : public ConformanceTest {};
class CursorConformanceTest : public ConformanceTest {};
class FollowConformanceTest : public ConformanceTest {};
class OverflowConformanceTest : public ConformanceTest {};
class CloseConformanceTest : public ConformanceTest {};

// Declarations, idempotency, expected sequences, publish times and tenants,
// on a bus whose clock the test sets.
class PolicyConformanceTest : public ConformanceTest {
 protected:
  bool UsesManualClock() const override { return true; }
};

// Stream deletion, on a manual clock.
class DeletionConformanceTest : public PolicyConformanceTest {};

// Declared retention bounds enforced by Trim, on a manual clock.
class RetentionPolicyConformanceTest : public PolicyConformanceTest {};

// Consumer groups (core/consumer_groups.h) and Process with retries and dead
// letters (core/group_processor.h), on a bus whose clock the test moves so
// that leases expire when the test says.
class GroupConformanceTest : public ConformanceTest {
 protected:
  bool UsesManualClock() const override { return true; }
  ConsumerGroups& groups() { return *bus().groups(); }
  void SetUp() override;
};

// A bus that keeps at most kRetainedEvents per stream.
class RetentionConformanceTest : public ConformanceTest {
 public:
  static constexpr uint64_t kRetainedEvents = 5;

 protected:
  Config BusConfig(const std::string& dir) const override;
};

}  // namespace keel::conformance

#define KEEL_CONFORMANCE_SUITE_(prefix, suite, generator, ...) \
  INSTANTIATE_TEST_SUITE_P(prefix, suite, ::testing::ValuesIn(generator({__VA_ARGS__})), TargetName)

// Instantiates every conformance suite for the given Targets (at global
// namespace scope; `prefix` is an identifier unique in the binary).
#define KEEL_INSTANTIATE_CONFORMANCE(prefix, ...)                                            \
  namespace keel::conformance {                                                              \
  KEEL_CONFORMANCE_SUITE_(prefix, SequenceConformanceTest, AllTargets, __VA_ARGS__);         \
  KEEL_CONFORMANCE_SUITE_(prefix, PublishConformanceTest, AllTargets, __VA_ARGS__);          \
  KEEL_CONFORMANCE_SUITE_(prefix, ReplayConformanceTest, AllTargets, __VA_ARGS__);           \
  KEEL_CONFORMANCE_SUITE_(prefix, CursorConformanceTest, AllTargets, __VA_ARGS__);           \
  KEEL_CONFORMANCE_SUITE_(prefix, FollowConformanceTest, AllTargets, __VA_ARGS__);           \
  KEEL_CONFORMANCE_SUITE_(prefix, OverflowConformanceTest, AllTargets, __VA_ARGS__);         \
  KEEL_CONFORMANCE_SUITE_(prefix, CloseConformanceTest, AllTargets, __VA_ARGS__);            \
  KEEL_CONFORMANCE_SUITE_(prefix, RetentionConformanceTest, RetentionTargets, __VA_ARGS__);  \
  KEEL_CONFORMANCE_SUITE_(prefix, PolicyConformanceTest, AllTargets, __VA_ARGS__);           \
  KEEL_CONFORMANCE_SUITE_(prefix, RetentionPolicyConformanceTest, RetentionPolicyTargets,    \
                          __VA_ARGS__);                                                      \
  KEEL_CONFORMANCE_SUITE_(prefix, GroupConformanceTest, AllTargets, __VA_ARGS__);            \
  KEEL_CONFORMANCE_SUITE_(prefix, DeletionConformanceTest, AllTargets, __VA_ARGS__);         \
  [[maybe_unused]] static const bool keel_conformance_linked_##prefix = (ForceLink(), true); \
  }                                                                                          \
  static_assert(true, "")

#endif  // KEEL_TESTS_CONFORMANCE_CONFORMANCE_H_
