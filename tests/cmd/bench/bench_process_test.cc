// The helpers of the keel-bench network modes: the CPU-time readers behind
// `keel-bench http`'s "CPU per event" (the same process read through /proc
// and through getrusage agree, and a thread's clock counts that thread's
// work), and the search for the keel binary `keel-bench sse` runs.
#include "keel/cmd/keel-bench/bench_process.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "keel/tests/testing/temp_dir.h"

namespace keel::bench {
namespace {

// Spins for `seconds` of wall time (on an idle machine, as much CPU time).
void Spin(double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  volatile uint64_t sink = 0;
  while (std::chrono::steady_clock::now() < end) sink = sink + 1;
}

TEST(CpuTimeTest, ProcFileAndGetrusageAgreeForThisProcess) {
  Spin(0.3);
  const double from_proc = ProcessCpuSeconds(getpid());
  const double from_rusage = ProcessCpuSeconds(0);
  EXPECT_GT(from_proc, 0.0) << "utime and stime were not found in /proc/<pid>/stat";
  // /proc counts in clock ticks (10 ms at 100 Hz); allow a few.
  EXPECT_NEAR(from_proc, from_rusage, 0.05);
}

TEST(CpuTimeTest, AThreadsClockCountsOnlyItsOwnWork) {
  std::thread idle([] { std::this_thread::sleep_for(std::chrono::milliseconds(300)); });
  const double idle_before = ThreadCpuSeconds(idle.native_handle());
  const double self_before = ThreadCpuSeconds(pthread_self());
  Spin(0.2);
  const double self_spent = ThreadCpuSeconds(pthread_self()) - self_before;
  const double idle_spent = ThreadCpuSeconds(idle.native_handle()) - idle_before;
  idle.join();
  EXPECT_GT(self_spent, idle_spent);
  EXPECT_LT(idle_spent, 0.05) << "a sleeping thread";
}

// The machine's busy time includes this process's work (other processes
// can only add to it).
TEST(CpuTimeTest, TheMachinesBusyTimeCountsThisProcessesWork) {
  const double machine_before = MachineBusyCpuSeconds();
  const double self_before = ProcessCpuSeconds(0);
  Spin(0.3);
  const double machine_spent = MachineBusyCpuSeconds() - machine_before;
  const double self_spent = ProcessCpuSeconds(0) - self_before;
  EXPECT_GT(machine_before, 0.0) << "/proc/stat's cpu line was not read";
  EXPECT_GE(machine_spent, self_spent - 0.05);  // /proc/stat counts in clock ticks.
}

// The fields read: a wrong choice (idle or iowait counted, irq, softirq or
// steal left out) changes the sum.
TEST(CpuTimeTest, BusyTicksAreAllButIdleAndIowait) {
  // guest and guest_nice (the last two) are already in user and nice.
  EXPECT_EQ(BusyTicksOfStatLine("cpu  100 5 50 100000 2000 3 30 7 11 13"),
            100u + 5 + 50 + 3 + 30 + 7);
  EXPECT_EQ(BusyTicksOfStatLine("cpu  1 2 3 4 5 6 7 8"), 1u + 2 + 3 + 6 + 7 + 8);
}

TEST(CpuTimeTest, AnotherLineHasNoBusyTicks) {
  EXPECT_EQ(BusyTicksOfStatLine("cpu0 100 5 50 1000 20 3 30 7 0 0"), 0u) << "one CPU's line";
  EXPECT_EQ(BusyTicksOfStatLine("cpu  100 5 50 1000 20 3 30"), 0u) << "too few fields";
  EXPECT_EQ(BusyTicksOfStatLine("cpu  100 5 x 1000 20 3 30 7 0 0"), 0u) << "not a number";
}

TEST(CpuTimeTest, AMissingProcessReadsAsZero) {
  EXPECT_EQ(ProcessCpuSeconds(999'999'999), 0.0);
}

// Writes an empty file at `path` (making its directory) with `mode`.
void Touch(const std::filesystem::path& path, std::filesystem::perms mode) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path).put('\n');
  std::filesystem::permissions(path, mode);
}

std::string Normal(const std::string& path) {
  return std::filesystem::path(path).lexically_normal().string();
}

constexpr auto kExecutable = std::filesystem::perms::owner_all;
constexpr auto kNotExecutable =
    std::filesystem::perms::owner_read | std::filesystem::perms::owner_write;

// keel-bench sse runs the keel of its own build, not whichever is on PATH.
TEST(KeelProgramTest, TheBuildTreesKeelIsFoundFromKeelBench) {
  testing::TempDir build;
  Touch(build.path() / "cmd/keel-bench/keel-bench", kExecutable);
  Touch(build.path() / "cmd/keel/keel", kExecutable);
  EXPECT_EQ(KeelProgramBeside(build.Sub("cmd/keel-bench/keel-bench")),
            Normal(build.Sub("cmd/keel/keel")));
}

TEST(KeelProgramTest, AKeelInTheSameDirectoryComesFirst) {
  testing::TempDir tree;
  Touch(tree.path() / "bin/keel-bench", kExecutable);
  Touch(tree.path() / "bin/keel", kExecutable);
  Touch(tree.path() / "keel/keel", kExecutable);
  EXPECT_EQ(KeelProgramBeside(tree.Sub("bin/keel-bench")), Normal(tree.Sub("bin/keel")));
}

TEST(KeelProgramTest, AFileThatCannotRunIsNotTaken) {
  testing::TempDir build;
  Touch(build.path() / "cmd/keel-bench/keel-bench", kExecutable);
  Touch(build.path() / "cmd/keel-bench/keel", kNotExecutable);
  Touch(build.path() / "cmd/keel/keel", kExecutable);
  EXPECT_EQ(KeelProgramBeside(build.Sub("cmd/keel-bench/keel-bench")),
            Normal(build.Sub("cmd/keel/keel")));
}

}  // namespace
}  // namespace keel::bench
