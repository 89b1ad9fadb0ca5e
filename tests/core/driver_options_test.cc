// The built-in drivers describe themselves: CreateBus refuses an option a
// driver does not declare or a value not of its type, naming the valid
// options, and Traits() tells how a bus will behave with a Config.
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
using ::testing::AllOf;
using ::testing::HasSubstr;

std::shared_ptr<DriverFactory> Driver(absl::string_view name) {
  LinkBuiltinDrivers();
  absl::StatusOr<std::shared_ptr<DriverFactory>> factory = DriverRegistry().Find(name);
  EXPECT_TRUE(factory.ok()) << factory.status();
  return factory.ok() ? *factory : nullptr;
}

TEST(DriverOptionsTest, UnknownOptionIsRefusedNamingTheValidOnes) {
  LinkBuiltinDrivers();
  absl::StatusOr<std::unique_ptr<EventBus>> bus = CreateBus("memory", Config{{"nope", "1"}});
  EXPECT_THAT(bus, HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(bus.status().message(),
              AllOf(HasSubstr("driver 'memory'"), HasSubstr("unknown option 'nope'"),
                    HasSubstr("max_events_per_stream, max_bytes_per_stream")));
}

TEST(DriverOptionsTest, MalformedValueIsRefusedNamingTheOption) {
  LinkBuiltinDrivers();
  absl::StatusOr<std::unique_ptr<EventBus>> bus =
      CreateBus("durable", Config{{"store", "memory"}, {"sync", "bogus"}});
  EXPECT_THAT(bus, HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(bus.status().message(),
              AllOf(HasSubstr("driver 'durable'"), HasSubstr("option 'sync'"),
                    HasSubstr("'bogus' is not one of always, interval, none")));
}

// The durable driver takes the options of the store its "store" names, as
// "store.<option>", and those only.
TEST(DriverOptionsTest, DurableTakesTheOptionsOfItsStore) {
  const std::shared_ptr<DriverFactory> durable = Driver("durable");
  ASSERT_NE(durable, nullptr);
  absl::Status typo = ValidateDriverOptions(
      *durable, Config{{"store", "leveldb"}, {"store.path", "/x"}, {"store.compresion", "none"}});
  EXPECT_THAT(typo, HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(typo.message(), AllOf(HasSubstr("unknown option 'store.compresion'"),
                                    HasSubstr("store.path"), HasSubstr("store.compression")));

  absl::Status bad_value = ValidateDriverOptions(
      *durable, Config{{"store", "leveldb"}, {"store.path", "/x"}, {"store.compression", "zstd"}});
  EXPECT_THAT(bad_value.message(), HasSubstr("'zstd' is not one of snappy, none"));

  // The memory store takes no path.
  absl::Status no_path =
      ValidateDriverOptions(*durable, Config{{"store", "memory"}, {"store.path", "/x"}});
  EXPECT_THAT(no_path, HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(no_path.message(), HasSubstr("unknown option 'store.path'"));

  EXPECT_OK(ValidateDriverOptions(*durable, Config{{"store", "leveldb"},
                                                   {"store.path", "/x"},
                                                   {"sync", "interval"},
                                                   {"sync_interval", "20ms"},
                                                   {"store.write_buffer_bytes", "1048576"}}));
}

TEST(DriverOptionsTest, DurableOfAnUnknownStoreIsNotFoundListingTheStores) {
  const std::shared_ptr<DriverFactory> durable = Driver("durable");
  ASSERT_NE(durable, nullptr);
  absl::Status status = ValidateDriverOptions(*durable, Config{{"store", "rocksdb"}});
  EXPECT_THAT(status, HasErrorKind(ErrorKind::kNotFound));
  EXPECT_THAT(status.message(), AllOf(HasSubstr("rocksdb"), HasSubstr("leveldb")));
}

// What `keel drivers` lists and the daemon's --data-dir stands for.
TEST(DriverOptionsTest, DurableListsEveryStoresOptionsWithTheirFlags) {
  const std::shared_ptr<DriverFactory> durable = Driver("durable");
  ASSERT_NE(durable, nullptr);
  const std::vector<OptionSpec> options = durable->options();
  const OptionSpec* path = FindOption(options, "store.path");
  ASSERT_NE(path, nullptr);
  EXPECT_EQ(path->flag, "data-dir");
  EXPECT_EQ(path->flag_default, "./data");
  EXPECT_THAT(path->help, HasSubstr("store leveldb"));
  ASSERT_NE(FindOption(options, "sync"), nullptr);
  EXPECT_EQ(FindOption(options, "sync")->flag, "sync");
  ASSERT_NE(FindOption(options, "store"), nullptr);
  EXPECT_EQ(FindOption(options, "store")->flag, "store");
  for (const OptionSpec& spec : options) EXPECT_FALSE(spec.help.empty()) << spec.name;
}

TEST(DriverOptionsTest, MemoryNeverBlocksAPublish) {
  const std::shared_ptr<DriverFactory> memory = Driver("memory");
  ASSERT_NE(memory, nullptr);
  const DriverTraits traits = memory->Traits(Config{});
  EXPECT_FALSE(traits.publishes_may_block);
  EXPECT_FALSE(traits.keeps_history);
  EXPECT_FALSE(traits.several_writers);
}

// A publish on the durable driver waits for a disk exactly when it syncs to
// one: the daemon then keeps it off the threads that serve connections.
TEST(DriverOptionsTest, DurablePublishesBlockOnlyWhenTheyWaitForADisk) {
  const std::shared_ptr<DriverFactory> durable = Driver("durable");
  ASSERT_NE(durable, nullptr);
  const Config leveldb{{"store", "leveldb"}, {"store.path", "/x"}};
  auto with = [](Config config, absl::string_view key, absl::string_view value) {
    config.Set(key, value);
    return config;
  };
  EXPECT_TRUE(durable->Traits(leveldb).publishes_may_block);  // sync defaults to always.
  EXPECT_TRUE(durable->Traits(with(leveldb, "sync", "always")).publishes_may_block);
  EXPECT_TRUE(durable->Traits(with(leveldb, "sync", "interval")).publishes_may_block);
  EXPECT_FALSE(durable->Traits(with(leveldb, "sync", "none")).publishes_may_block);
  EXPECT_FALSE(
      durable->Traits(Config{{"store", "memory"}, {"sync", "always"}}).publishes_may_block);
  EXPECT_FALSE(durable->Traits(Config{}).publishes_may_block);  // Degraded: the memory ring.
  EXPECT_FALSE(durable->Traits(Config{{"store", "none"}}).publishes_may_block);

  EXPECT_TRUE(durable->Traits(leveldb).keeps_history);
  EXPECT_FALSE(durable->Traits(Config{{"store", "memory"}}).keeps_history);
  EXPECT_FALSE(durable->Traits(Config{}).keeps_history);
}

// A host's driver that says nothing about itself takes no options and is
// assumed to block, so a server never runs its publishes inline.
class SilentDriverFactory : public DriverFactory {
 public:
  absl::string_view name() const override { return "silent"; }
  absl::string_view description() const override { return "says nothing"; }
  absl::StatusOr<std::unique_ptr<EventBus>> Create(const Config&,
                                                   const DriverContext&) const override {
    return Unavailable("not for use");
  }
};

TEST(DriverOptionsTest, UndescribedDriverTakesNoOptionsAndMayBlock) {
  SilentDriverFactory silent;
  EXPECT_TRUE(silent.Traits(Config{}).publishes_may_block);
  EXPECT_TRUE(silent.Traits(Config{}).several_writers);
  EXPECT_FALSE(silent.Traits(Config{}).keeps_history);
  absl::Status status = ValidateDriverOptions(silent, Config{{"path", "/x"}});
  EXPECT_THAT(status, HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(status.message(), HasSubstr("valid options: (none)"));
}

}  // namespace
}  // namespace keel
