#include "keel/tests/crash/crash_loop_options.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <random>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace keel::crash_test {
namespace {

CrashLoopOptions& Options() {
  static CrashLoopOptions options;
  return options;
}

// --name VALUE or --name=VALUE at argv[i]; advances i past what it took.
std::optional<std::string> TakeFlag(absl::string_view name, int argc, char** argv, int& i) {
  absl::string_view arg = argv[i];
  if (!absl::ConsumePrefix(&arg, "--") || !absl::ConsumePrefix(&arg, name)) return std::nullopt;
  if (arg.empty() && i + 1 < argc) return argv[++i];
  if (absl::ConsumePrefix(&arg, "=")) return std::string(arg);
  return std::nullopt;
}

}  // namespace

absl::StatusOr<CrashLoopOptions> CrashLoopOptionsFrom(int& argc, char** argv) {
  std::optional<std::string> loops;
  std::optional<std::string> seed;
  std::optional<std::string> minutes;
  if (const char* value = std::getenv("KEEL_SOAK_MINUTES")) minutes = value;
  if (const char* value = std::getenv("KEEL_CRASH_LOOPS")) loops = value;
  if (const char* value = std::getenv("KEEL_CRASH_SEED")) seed = value;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::optional<std::string> value = TakeFlag("loops", argc, argv, i)) {
      loops = value;
    } else if (std::optional<std::string> value = TakeFlag("seed", argc, argv, i)) {
      seed = value;
    } else if (std::optional<std::string> value = TakeFlag("minutes", argc, argv, i)) {
      minutes = value;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  CrashLoopOptions options;
  if (loops.has_value() && (!absl::SimpleAtoi(*loops, &options.loops) || options.loops < 0)) {
    return absl::InvalidArgumentError(absl::StrCat("--loops takes a count, not '", *loops, "'"));
  }
  if (minutes.has_value() &&
      (!absl::SimpleAtod(*minutes, &options.minutes) || !(options.minutes > 0))) {
    return absl::InvalidArgumentError(
        absl::StrCat("--minutes takes a positive number, not '", *minutes, "'"));
  }
  if (seed.has_value() && !absl::SimpleAtoi(*seed, &options.seed)) {
    return absl::InvalidArgumentError(absl::StrCat("--seed takes a number, not '", *seed, "'"));
  }
  if (!seed.has_value()) {
    std::random_device random;
    options.seed = uint64_t{random()} << 32 | random();
  }
  return options;
}

int RunTestsWithOptions(const char* program, int argc, char** argv) {
  absl::StatusOr<CrashLoopOptions> options = CrashLoopOptionsFrom(argc, argv);
  if (!options.ok()) {
    std::cerr << program << ": " << options.status().message() << "\n";
    return 2;
  }
  SetRunOptions(*options);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

const CrashLoopOptions& RunOptions() { return Options(); }
void SetRunOptions(const CrashLoopOptions& options) { Options() = options; }

}  // namespace keel::crash_test
