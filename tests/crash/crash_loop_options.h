// The run options of the crash loop and the soak: how many times the
// crash loop kills the daemon under load, how long the soak runs, and the
// seed of every random choice (kill moments, streams, batch sizes, pauses,
// page sizes), printed so that a failing run can be rerun with the same
// choices (thread timing still varies).
//
//   --loops N    or KEEL_CRASH_LOOPS=N    (default 10)
//   --minutes M  or KEEL_SOAK_MINUTES=M   (default 2)
//   --seed S     or KEEL_CRASH_SEED=S     (default: a new random seed)
//
// A flag wins over the environment.
#ifndef KEEL_TESTS_CRASH_CRASH_LOOP_OPTIONS_H_
#define KEEL_TESTS_CRASH_CRASH_LOOP_OPTIONS_H_

#include <cstdint>

#include "absl/status/statusor.h"

namespace keel::crash_test {

struct CrashLoopOptions {
  int loops = 10;
  double minutes = 2;
  uint64_t seed = 0;
};

// Reads the options and removes their flags from argv (the rest is
// GoogleTest's).
absl::StatusOr<CrashLoopOptions> CrashLoopOptionsFrom(int& argc, char** argv);

// The options main() read.
const CrashLoopOptions& RunOptions();
void SetRunOptions(const CrashLoopOptions& options);

// A test binary's main: reads the options (exit 2 naming `program` on a
// bad one), then runs the tests.
int RunTestsWithOptions(const char* program, int argc, char** argv);

}  // namespace keel::crash_test

#endif  // KEEL_TESTS_CRASH_CRASH_LOOP_OPTIONS_H_
