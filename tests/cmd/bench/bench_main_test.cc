// keel::bench::Main, the keel-bench program, driven in-process with string
// streams: the mode list, per-mode help and the usage errors. No benchmark
// runs here (the bench_*_quick smoke tests run them).
#include "keel/cmd/keel-bench/bench_main.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "keel/cmd/keel-bench/bench_mode.h"

namespace keel::bench {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

// `args` are the arguments after the program name.
Result RunBench(std::vector<std::string> args) {
  args.insert(args.begin(), "keel-bench");
  std::vector<const char*> argv;
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  argv.push_back(nullptr);
  std::ostringstream out, err;
  Result result;
  result.code = Main(static_cast<int>(args.size()), argv.data(), out, err);
  result.out = out.str();
  result.err = err.str();
  return result;
}

TEST(KeelBenchTest, HelpListsEveryMode) {
  Result r = RunBench({"--help"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  for (const std::string name : {"storage", "http", "sse", "jetstream"}) {
    EXPECT_THAT(r.out, HasSubstr("  " + name + " "));
  }
  for (const auto& mode : BenchModes()) {
    EXPECT_THAT(r.out, HasSubstr(std::string(mode->summary())));
  }
  EXPECT_EQ(RunBench({"-h"}).out, r.out);
}

TEST(KeelBenchTest, NoModeIsAUsageError) {
  Result r = RunBench({});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("Usage: keel-bench <mode>"));
  EXPECT_THAT(r.out, IsEmpty());
}

TEST(KeelBenchTest, AnUnknownModeIsAUsageErrorThatListsTheModes) {
  Result r = RunBench({"disk"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, AllOf(HasSubstr("unknown mode 'disk'"), HasSubstr("  storage ")));
}

TEST(KeelBenchTest, ModeHelpDescribesEveryOptionOfTheMode) {
  for (const auto& mode : BenchModes()) {
    const std::string name(mode->name());
    SCOPED_TRACE(name);
    Result r = RunBench({name, "--help"});
    EXPECT_EQ(r.code, kExitOk) << r.err;
    EXPECT_THAT(r.out, HasSubstr(std::string(mode->summary())));
    EXPECT_THAT(r.out, AllOf(HasSubstr("--help"), HasSubstr("--config")));
    po::options_description options;
    mode->AddOptions(options);
    for (const auto& option : options.options()) {
      EXPECT_THAT(r.out, HasSubstr("--" + option->long_name()));
      EXPECT_THAT(option->description(), Not(IsEmpty())) << option->long_name();
    }
  }
}

// Each mode is parsed with its own options: another mode's flag is a typo
// here, not silently ignored.
TEST(KeelBenchTest, AnotherModesOptionIsAUsageError) {
  Result r = RunBench({"storage", "--sse-rate", "5"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("sse-rate"));
  EXPECT_THAT(r.out, IsEmpty()) << "nothing ran";
}

TEST(KeelBenchTest, SseRefusesAKeelThatIsNoProgram) {
  Result r = RunBench({"sse", "--quick", "--keel", "/nonexistent/keel"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, AllOf(HasSubstr("--keel"), HasSubstr("/nonexistent/keel")));
  EXPECT_THAT(r.out, IsEmpty()) << "no daemon was started";
}

}  // namespace
}  // namespace keel::bench
