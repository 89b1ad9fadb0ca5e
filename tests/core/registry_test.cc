// Registry<Factory>: unique names, helpful not-found errors, sorted listing,
// ScopedOverride; and the process-wide driver registry built on it.
#include "keel/core/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "keel/core/driver_factory.h"
#include "keel/drivers/builtin_drivers.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel {
namespace {

using ::keel::testing::HasErrorKind;
using ::keel::testing::IsOk;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class FakeFactory {
 public:
  FakeFactory(std::string name, int version) : name_(std::move(name)), version_(version) {}
  absl::string_view name() const { return name_; }
  int version() const { return version_; }

 private:
  std::string name_;
  int version_;
};

std::shared_ptr<FakeFactory> Make(std::string name, int version = 1) {
  return std::make_shared<FakeFactory>(std::move(name), version);
}

int VersionOf(const Registry<FakeFactory>& registry, absl::string_view name) {
  absl::StatusOr<std::shared_ptr<FakeFactory>> found = registry.Find(name);
  return found.ok() ? (*found)->version() : -1;
}

TEST(RegistryTest, FindsRegisteredFactories) {
  Registry<FakeFactory> registry("widget");
  ASSERT_OK(registry.Register(Make("alpha", 1)));
  ASSERT_OK(registry.Register(Make("beta", 2)));
  EXPECT_EQ(VersionOf(registry, "alpha"), 1);
  EXPECT_EQ(VersionOf(registry, "beta"), 2);
}

TEST(RegistryTest, DuplicateNameIsConflictAndKeepsTheFirst) {
  Registry<FakeFactory> registry("widget");
  ASSERT_OK(registry.Register(Make("alpha", 1)));
  absl::Status status = registry.Register(Make("alpha", 2));
  EXPECT_THAT(status, HasErrorKind(ErrorKind::kConflict));
  EXPECT_THAT(status.message(), HasSubstr("alpha"));
  EXPECT_EQ(VersionOf(registry, "alpha"), 1);
}

TEST(RegistryTest, EmptyNameIsInvalid) {
  Registry<FakeFactory> registry("widget");
  EXPECT_THAT(registry.Register(Make("")), HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_TRUE(registry.RegisteredNames().empty());
}

TEST(RegistryTest, UnknownNameIsNotFoundListingRegisteredNamesSorted) {
  Registry<FakeFactory> registry("widget");
  for (const char* name : {"gamma", "alpha", "beta"}) ASSERT_OK(registry.Register(Make(name)));
  absl::StatusOr<std::shared_ptr<FakeFactory>> found = registry.Find("alhpa");
  EXPECT_THAT(found, HasErrorKind(ErrorKind::kNotFound));
  EXPECT_THAT(found.status().message(), HasSubstr("widget"));
  EXPECT_THAT(found.status().message(), HasSubstr("'alhpa'"));
  EXPECT_THAT(found.status().message(), HasSubstr("alpha, beta, gamma"));
}

TEST(RegistryTest, UnknownNameInEmptyRegistrySaysNone) {
  Registry<FakeFactory> registry("widget");
  absl::StatusOr<std::shared_ptr<FakeFactory>> found = registry.Find("x");
  EXPECT_THAT(found, HasErrorKind(ErrorKind::kNotFound));
  EXPECT_THAT(found.status().message(), HasSubstr("(none)"));
}

TEST(RegistryTest, RegisteredNamesAreSorted) {
  Registry<FakeFactory> registry("widget");
  for (const char* name : {"zeta", "Alpha", "mu", "alpha"}) {
    ASSERT_OK(registry.Register(Make(name)));
  }
  EXPECT_THAT(registry.RegisteredNames(), ElementsAre("Alpha", "alpha", "mu", "zeta"));
}

TEST(RegistryTest, ScopedOverrideReplacesThenRestores) {
  Registry<FakeFactory> registry("widget");
  ASSERT_OK(registry.Register(Make("alpha", 1)));
  {
    Registry<FakeFactory>::ScopedOverride override_alpha(registry, Make("alpha", 2));
    EXPECT_EQ(VersionOf(registry, "alpha"), 2);
    EXPECT_THAT(registry.RegisteredNames(), ElementsAre("alpha"));
  }
  EXPECT_EQ(VersionOf(registry, "alpha"), 1);
}

TEST(RegistryTest, ScopedOverrideOfNewNameRemovesItAfter) {
  Registry<FakeFactory> registry("widget");
  ASSERT_OK(registry.Register(Make("alpha", 1)));
  {
    Registry<FakeFactory>::ScopedOverride add_beta(registry, Make("beta", 5));
    EXPECT_EQ(VersionOf(registry, "beta"), 5);
    EXPECT_THAT(registry.RegisteredNames(), ElementsAre("alpha", "beta"));
  }
  EXPECT_THAT(registry.Find("beta"), HasErrorKind(ErrorKind::kNotFound));
  EXPECT_THAT(registry.RegisteredNames(), ElementsAre("alpha"));
  // The name is free again for a real registration.
  EXPECT_OK(registry.Register(Make("beta", 6)));
}

TEST(RegistryTest, NestedOverridesUnwindInOrder) {
  Registry<FakeFactory> registry("widget");
  ASSERT_OK(registry.Register(Make("alpha", 1)));
  {
    Registry<FakeFactory>::ScopedOverride outer(registry, Make("alpha", 2));
    {
      Registry<FakeFactory>::ScopedOverride inner(registry, Make("alpha", 3));
      EXPECT_EQ(VersionOf(registry, "alpha"), 3);
    }
    EXPECT_EQ(VersionOf(registry, "alpha"), 2);
  }
  EXPECT_EQ(VersionOf(registry, "alpha"), 1);
}

TEST(DriverRegistryTest, BuiltinMemoryDriverIsRegistered) {
  LinkBuiltinDrivers();
  EXPECT_THAT(DriverRegistry().RegisteredNames(), Contains("memory"));
  absl::StatusOr<std::unique_ptr<EventBus>> bus = CreateBus("memory", Config());
  ASSERT_THAT(bus, IsOk());
  EXPECT_OK((*bus)->Close());
}

TEST(DriverRegistryTest, UnknownDriverListsTheKnownOnes) {
  LinkBuiltinDrivers();
  absl::StatusOr<std::unique_ptr<EventBus>> bus = CreateBus("memroy", Config());
  EXPECT_THAT(bus, HasErrorKind(ErrorKind::kNotFound));
  EXPECT_THAT(bus.status().message(), HasSubstr("memory"));
  EXPECT_THAT(bus.status().message(), HasSubstr("driver"));
}

// A factory that refuses, so a test can tell it was the one used.
class RefusingDriverFactory : public DriverFactory {
 public:
  absl::string_view name() const override { return "memory"; }
  absl::string_view description() const override { return "refuses"; }
  absl::StatusOr<std::unique_ptr<EventBus>> Create(const Config&,
                                                   const DriverContext&) const override {
    return Unavailable("refusing driver");
  }
};

TEST(DriverRegistryTest, ScopedOverrideSwapsTheDriverCreateBusUses) {
  LinkBuiltinDrivers();
  {
    Registry<DriverFactory>::ScopedOverride fake(DriverRegistry(),
                                                 std::make_shared<RefusingDriverFactory>());
    EXPECT_THAT(CreateBus("memory", Config()), HasErrorKind(ErrorKind::kUnavailable));
  }
  absl::StatusOr<std::unique_ptr<EventBus>> bus = CreateBus("memory", Config());
  ASSERT_THAT(bus, IsOk());
  EXPECT_OK((*bus)->Close());
}

TEST(DriverRegistryTest, BadDriverOptionIsInvalidArgument) {
  LinkBuiltinDrivers();
  EXPECT_THAT(CreateBus("memory", Config{{"max_events_per_stream", "lots"}}),
              HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(CreateBus("memory", Config{{"max_events_per_stream", "0"}}),
              HasErrorKind(ErrorKind::kInvalidArgument));
}

}  // namespace
}  // namespace keel
