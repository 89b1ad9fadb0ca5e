// keel::cli::Main, driven in-process with string streams: the command list,
// per-command help, exit codes, driver selection and --config handling.
#include "keel/cmd/keel/cli.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/parsers.hpp>
#include <boost/program_options/variables_map.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "keel/cmd/keel/command.h"
#include "keel/core/driver_factory.h"
#include "keel/tests/cmd/run_keel.h"
#include "keel/tests/testing/status_matchers.h"
#include "keel/tests/testing/temp_dir.h"

namespace keel::cli {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

using Result = ::keel::testing::KeelRun;
using ::keel::testing::RunKeel;


std::string WriteFile(const testing::TempDir& dir, const std::string& name,
                      const std::string& text) {
  std::string path = dir.Sub(name);
  std::ofstream(path) << text;
  return path;
}

// Every run of whitespace (including line breaks) becomes one space.
std::string CollapseSpaces(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool space = c == ' ' || c == '\n' || c == '\t';
    if (!space) {
      out.push_back(c);
    } else if (!out.empty() && out.back() != ' ') {
      out.push_back(' ');
    }
  }
  return out;
}

TEST(CliTest, DriversListsRegisteredDriversWithDescriptions) {
  Result r = RunKeel({"drivers"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("memory\tbounded in-memory ring"));
  for (const std::string& name : DriverRegistry().RegisteredNames()) {
    EXPECT_THAT(r.out, HasSubstr(name + "\t"));
  }
}

// Each option as the driver declares it: name, type, default, flag, help.
TEST(CliTest, DriversListsEachDriversOptions) {
  Result r = RunKeel({"drivers"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\n  max_events_per_stream (uint, default 100000): newest events"));
  EXPECT_THAT(r.out, HasSubstr("\n  sync (always|interval|none, default always; flag --sync): "));
  EXPECT_THAT(r.out, HasSubstr("\n  store.path (string, default (required); flag --data-dir): "
                               "store leveldb: the database directory"));
  EXPECT_THAT(r.out, HasSubstr("\n  store.compression (snappy|none, default snappy): "));
}

TEST(CliTest, DaemonRefusesAnUnknownDriverOptionNamingTheValidOnes) {
  Result r = RunKeel(
      {"daemon", "--listen", "127.0.0.1:0", "--driver", "memory", "--driver-option", "nope=1"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err,
              AllOf(HasSubstr("keel daemon: driver 'memory': unknown option 'nope'"),
                    HasSubstr("valid options: max_events_per_stream, max_bytes_per_stream")));
  EXPECT_THAT(r.out, Not(HasSubstr("listening")));
}

TEST(CliTest, SelftestRefusesAMalformedDriverOptionNamingTheValidValues) {
  Result r = RunKeel({"selftest", "--driver", "durable", "--driver-option", "store=memory",
                      "--driver-option", "sync=bogus"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("driver 'durable': option 'sync': 'bogus' is not one of always, "
                               "interval, none"));
  EXPECT_THAT(r.out, IsEmpty());
}

// A driver's flag stands for its option: `--store memory` is
// `--driver-option store=memory`.
TEST(CliTest, SelftestTakesTheDriversFlags) {
  Result r = RunKeel({"selftest", "--driver", "durable", "--store", "memory", "--sync", "none"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("selftest passed"));
  // Not degraded: the store was set (a degraded driver warns on stderr).
  EXPECT_THAT(r.err, IsEmpty());

  Result bad = RunKeel({"selftest", "--driver", "durable", "--store", "memory", "--sync", "soon"});
  EXPECT_EQ(bad.code, kExitUsage);
  EXPECT_THAT(bad.err, HasSubstr("'soon' is not one of always, interval, none"));
}

TEST(CliTest, ADriverFlagIsRefusedForADriverThatDoesNotTakeIt) {
  Result r = RunKeel({"selftest", "--driver", "memory", "--sync", "none"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, AllOf(HasSubstr("--sync sets option sync of driver 'durable'"),
                           HasSubstr("driver 'memory' takes: max_events_per_stream")));
}

TEST(CliTest, SelftestHelpShowsTheDriversFlagsWithoutDefaults) {
  Result r = RunKeel({"selftest", "--help"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("--data-dir arg "), HasSubstr("--store arg "),
                           HasSubstr("--sync arg "), HasSubstr("--driver arg (=memory)")));
  EXPECT_THAT(r.out, Not(HasSubstr("(=./data)")));
}

// SelectDriver over parsed flags, as `keel daemon` (flag defaults) and
// `keel selftest` (none) declare them.
absl::StatusOr<DriverSelection> Select(std::vector<std::string> args, bool flag_defaults) {
  po::options_description options;
  AddDriverOptions(options, "durable", flag_defaults);
  std::vector<const char*> argv = {"keel"};
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  po::variables_map vars;
  po::store(po::parse_command_line(static_cast<int>(argv.size()), argv.data(), options), vars);
  po::notify(vars);
  return SelectDriver(vars);
}

TEST(SelectDriverTest, DaemonDefaultsStoreInLevelDbInDataSyncingEveryPublish) {
  ASSERT_OK_AND_ASSIGN(DriverSelection selection, Select({}, true));
  EXPECT_EQ(selection.name, "durable");
  EXPECT_EQ(selection.config.values(),
            (std::map<std::string, std::string>{
                {"store", "leveldb"}, {"store.path", "./data"}, {"sync", "always"}}));
  EXPECT_TRUE(selection.traits.publishes_may_block);
  EXPECT_TRUE(selection.traits.keeps_history);
}

TEST(SelectDriverTest, FlagsSetTheirOptionsAndDriverOptionsWin) {
  ASSERT_OK_AND_ASSIGN(DriverSelection selection, Select({"--data-dir", "/flag", "--driver-option",
                                                          "store.path=/option", "--sync", "none"},
                                                         true));
  EXPECT_EQ(selection.config.GetString("store.path", ""), "/option");
  EXPECT_EQ(selection.config.GetString("sync", ""), "none");
  EXPECT_FALSE(selection.traits.publishes_may_block);  // Nothing waits for the disk.
}

// The default data directory goes only to a store that has a path.
TEST(SelectDriverTest, FlagDefaultsApplyOnlyWhereTheDriverTakesThem) {
  ASSERT_OK_AND_ASSIGN(DriverSelection memory_store, Select({"--store", "memory"}, true));
  EXPECT_EQ(memory_store.config.values(),
            (std::map<std::string, std::string>{{"store", "memory"}, {"sync", "always"}}));
  EXPECT_FALSE(memory_store.traits.publishes_may_block);

  ASSERT_OK_AND_ASSIGN(DriverSelection degraded, Select({"--store", "none"}, true));
  EXPECT_FALSE(degraded.config.Has("store.path"));
  EXPECT_FALSE(degraded.traits.keeps_history);

  ASSERT_OK_AND_ASSIGN(DriverSelection memory, Select({"--driver", "memory"}, true));
  EXPECT_TRUE(memory.config.values().empty());
  EXPECT_FALSE(memory.traits.publishes_may_block);

  ASSERT_OK_AND_ASSIGN(DriverSelection no_defaults, Select({}, false));
  EXPECT_TRUE(no_defaults.config.values().empty());
}

TEST(SelectDriverTest, AGivenDataDirForAStoreWithoutAPathIsRefused) {
  absl::StatusOr<DriverSelection> selection =
      Select({"--store", "memory", "--data-dir", "/d"}, true);
  EXPECT_THAT(selection, ::keel::testing::HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(selection.status().message(),
              AllOf(HasSubstr("--data-dir sets option store.path, which driver 'durable' does "
                              "not take"),
                    HasSubstr("it takes: store, sync")));
}

TEST(CliTest, HelpListsEveryCommand) {
  Result r = RunKeel({"--help"});
  EXPECT_EQ(r.code, kExitOk);
  std::vector<std::unique_ptr<Command>> commands = BuiltinCommands();
  ASSERT_THAT(commands, Not(IsEmpty()));
  for (const auto& command : commands) {
    EXPECT_THAT(r.out, HasSubstr("  " + std::string(command->name()) + " "));
    EXPECT_THAT(r.out, HasSubstr(std::string(command->summary())));
  }
  EXPECT_EQ(RunKeel({"help"}).out, r.out);
  EXPECT_EQ(RunKeel({"-h"}).out, r.out);
}

// The benchmarks are a program of their own (keel-bench): a host program
// that runs keel::cli::Main carries none of them.
TEST(CliTest, HelpListsNoBenchmark) {
  Result r = RunKeel({"--help"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_THAT(r.out, Not(HasSubstr("bench")));
  EXPECT_EQ(RunKeel({"bench", "--help"}).code, kExitUsage) << "an unknown command";
}

TEST(CliTest, NoCommandIsAUsageError) {
  Result r = RunKeel({});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("Usage: keel <command>"));
  EXPECT_THAT(r.out, IsEmpty());
}

TEST(CliTest, CommandHelpDescribesEveryOption) {
  for (const auto& command : BuiltinCommands()) {
    const std::string name(command->name());
    SCOPED_TRACE(name);
    Result r = RunKeel({name, "--help"});
    EXPECT_EQ(r.code, kExitOk) << r.err;
    EXPECT_THAT(r.out, HasSubstr(std::string(command->summary())));
    EXPECT_THAT(r.out, AllOf(HasSubstr("--help"), HasSubstr("--config")));
    po::options_description options;
    command->AddOptions(options);
    for (const auto& option : options.options()) {
      EXPECT_THAT(r.out, HasSubstr("--" + option->long_name()));
      EXPECT_THAT(option->description(), Not(IsEmpty())) << option->long_name();
      // Help wraps descriptions across lines; compare with whitespace collapsed.
      EXPECT_THAT(CollapseSpaces(r.out), HasSubstr(CollapseSpaces(option->description())));
    }
  }
}

TEST(CliTest, SelftestHelpNamesItsOptions) {
  // Guards the generic test above against a command list that lost its options.
  Result r = RunKeel({"selftest", "--help"});
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("--driver"), HasSubstr("--driver-option"), HasSubstr("--stream")));
}

TEST(CliTest, UnknownCommandIsAUsageError) {
  Result r = RunKeel({"no-such-command"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("unknown command 'no-such-command'"));
  EXPECT_THAT(r.err, HasSubstr("Commands:"));
}

TEST(CliTest, BadOptionIsAUsageError) {
  Result r = RunKeel({"drivers", "--no-such-option"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("no-such-option"));

  Result missing_value = RunKeel({"selftest", "--driver"});
  EXPECT_EQ(missing_value.code, kExitUsage);

  Result bad_assignment = RunKeel({"selftest", "--driver-option", "no-equals-sign"});
  EXPECT_EQ(bad_assignment.code, kExitUsage);
}

TEST(CliTest, DaemonRefusesAHeaderBreakInCorsOrigin) {
  Result r = RunKeel({"daemon", "--listen", "127.0.0.1:0", "--driver", "memory", "--cors-origin",
                      "https://a.example\r\nSet-Cookie: x=1"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("CORS origin must not contain control characters"));
}

// The defaults the daemon's flags document (and a user relies on when
// giving none).
TEST(CliTest, DaemonHelpShowsItsDefaults) {
  Result r = RunKeel({"daemon", "--help"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  for (const char* flag : {"--listen arg (=127.0.0.1:8080)", "--data-dir arg (=./data)",
                           "--driver arg (=durable)", "--store arg (=leveldb)",
                           "--sync arg (=always)", "--body-limit arg (=1048576)",
                           "--idle-timeout arg (=60s)", "--rate-limit arg (=0)"}) {
    EXPECT_THAT(r.out, HasSubstr(flag));
  }
}

TEST(CliTest, DaemonRefusesBadAccessRateAndLogOptionsBeforeStarting) {
  const std::vector<std::string> base = {"daemon", "--listen", "127.0.0.1:0"};
  const struct {
    std::vector<std::string> extra;
    std::string message;
  } cases[] = {
      {{"--auth-tokens", "/nonexistent/keel-tokens"}, "cannot read access tokens file"},
      {{"--rate-limit", "-1"}, "rate limit must be 0 (none) or at least 1e-06 requests per second"},
      {{"--rate-limit", "10", "--rate-burst", "0.5"}, "rate burst must be at least 1"},
      {{"--log-level", "verbose"}, "--log-level wants debug, info, warn, error or off"},
      {{"--driver", "durable", "--store", "memory", "--sync", "sometimes"},
       "'sometimes' is not one of always, interval, none"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = base;
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    if (c.extra[0] != "--driver") args.insert(args.end(), {"--driver", "memory"});
    SCOPED_TRACE(absl::StrJoin(c.extra, " "));
    Result r = RunKeel(args);
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_THAT(r.err, HasSubstr(c.message));
  }
}

TEST(CliTest, SelftestPassesOnTheMemoryDriver) {
  Result r = RunKeel({"selftest"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("selftest passed: published 3, replayed 3, followed 3"));
  EXPECT_THAT(r.err, IsEmpty());
}

TEST(CliTest, SelftestPassesDriverOptionsToTheDriver) {
  // A ring of one event cannot replay the three selftest events.
  Result r = RunKeel({"selftest", "--driver-option", "max_events_per_stream=1"});
  EXPECT_EQ(r.code, kExitFailure) << r.out;

  Result bad_value = RunKeel({"selftest", "--driver-option", "max_events_per_stream=lots"});
  EXPECT_EQ(bad_value.code, kExitUsage);
  EXPECT_THAT(bad_value.err, HasSubstr("max_events_per_stream"));
}

TEST(CliTest, SelftestOfUnknownDriverFailsListingRegisteredDrivers) {
  Result r = RunKeel({"selftest", "--driver", "nope"});
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_THAT(r.err, AllOf(HasSubstr("unknown driver 'nope'"), HasSubstr("registered:"),
                           HasSubstr("memory")));
}

TEST(CliTest, ConfigFileSuppliesOptionsAndFlagsOverrideIt) {
  testing::TempDir dir;
  const std::string config = WriteFile(dir, "keel.conf", "stream = from-config\n");

  Result from_file = RunKeel({"selftest", "--config", config});
  EXPECT_EQ(from_file.code, kExitOk) << from_file.err;
  EXPECT_THAT(from_file.out, HasSubstr("on stream 'from-config'"));

  Result overridden = RunKeel({"selftest", "--config", config, "--stream", "from-flag"});
  EXPECT_EQ(overridden.code, kExitOk) << overridden.err;
  EXPECT_THAT(overridden.out, HasSubstr("on stream 'from-flag'"));
  EXPECT_THAT(overridden.out, Not(HasSubstr("from-config")));
}

TEST(CliTest, ConfigFileDriverIsOverriddenByTheFlag) {
  testing::TempDir dir;
  const std::string config = WriteFile(dir, "keel.conf", "driver = nope\n");
  EXPECT_EQ(RunKeel({"selftest", "--config", config}).code, kExitFailure);
  Result r = RunKeel({"selftest", "--config", config, "--driver", "memory"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
}

TEST(CliTest, ConfigFileErrorsAreUsageErrors) {
  testing::TempDir dir;
  Result missing = RunKeel({"selftest", "--config", dir.Sub("missing.conf")});
  EXPECT_EQ(missing.code, kExitUsage);
  EXPECT_THAT(missing.err, HasSubstr("cannot read config file"));

  const std::string unknown = WriteFile(dir, "bad.conf", "no_such_key = 1\n");
  Result bad = RunKeel({"selftest", "--config", unknown});
  EXPECT_EQ(bad.code, kExitUsage);
  EXPECT_THAT(bad.err, HasSubstr("no_such_key"));
}

// A [section] block sets the driver's options named section.key: here the
// durable driver's store.path, where the selftest's events then are.
TEST(CliTest, ConfigFileBlocksSetDriverOptions) {
  testing::TempDir dir;
  const std::string config = WriteFile(
      dir, "keel.conf",
      absl::StrCat("driver = durable\nstore = leveldb\n[store]\npath = ", dir.Sub("from-block"),
                   "\n"));
  Result r = RunKeel({"selftest", "--config", config});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir.Sub("from-block") + "/CURRENT")) << r.out;

  // A --driver-option flag for the same key takes precedence.
  Result flagged = RunKeel(
      {"selftest", "--config", config, "--driver-option", "store.path=" + dir.Sub("from-flag")});
  EXPECT_EQ(flagged.code, kExitOk) << flagged.err;
  EXPECT_TRUE(std::filesystem::exists(dir.Sub("from-flag") + "/CURRENT"));

  // A block key the driver does not declare is refused by its full name.
  const std::string unknown = WriteFile(dir, "unknown.conf",
                                        "driver = durable\nstore = memory\n[cold_store]\n"
                                        "no_such_option = 1\n");
  Result bad = RunKeel({"selftest", "--config", unknown});
  EXPECT_NE(bad.code, kExitOk);
  EXPECT_THAT(bad.err, HasSubstr("cold_store.no_such_option"));
}

TEST(CliTest, VersionPrintsTheVersion) {
  Result r = RunKeel({"version"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_THAT(r.out, ::testing::StartsWith("keel "));
}

}  // namespace
}  // namespace keel::cli
