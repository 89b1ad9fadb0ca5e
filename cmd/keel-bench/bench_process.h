// Process and socket helpers of the `keel-bench` network modes (http, sse):
// find and run external programs (redis-server, redis-benchmark, the keel
// binary), wait for a listener, read a process's resident memory, raise the
// open-file limit. Ports for the servers come from tests/ports (FreePort).
//
// Thread safety: the functions are safe anywhere; a ChildProcess is used by
// one thread.
#ifndef KEEL_CMD_KEEL_BENCH_BENCH_PROCESS_H_
#define KEEL_CMD_KEEL_BENCH_BENCH_PROCESS_H_

#include <pthread.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace keel::bench {

// The absolute path of `name` on $PATH, or "" when it is not there.
std::string FindProgram(const std::string& name);

// The running executable (/proc/self/exe).
std::string SelfExecutable();

// The keel binary of the same build as the keel-bench at `bench_path`: a
// `keel` in the same directory, else the build tree's (keel-bench in
// <build>/cmd/keel-bench/, keel in <build>/cmd/keel/), else `keel` on $PATH;
// "" when there is none.
std::string KeelProgramBeside(const std::string& bench_path);

// Polls until 127.0.0.1:port accepts a TCP connection.
absl::Status WaitForListener(uint16_t port, absl::Duration timeout);

// A child process started with posix_spawn; stdout and stderr go to
// `log_path` (appended) or /dev/null. The destructor kills it (SIGKILL) if
// it still runs.
class ChildProcess {
 public:
  static absl::StatusOr<ChildProcess> Start(const std::vector<std::string>& argv,
                                            const std::string& log_path = "");
  ChildProcess() = default;
  ChildProcess(ChildProcess&& other) noexcept : pid_(other.pid_) { other.pid_ = -1; }
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }
  // Sends `signal` and waits up to `timeout` for the exit, then SIGKILLs.
  // Returns the exit status (128 + signal number when killed by a signal).
  int Stop(int signal, absl::Duration timeout);

 private:
  pid_t pid_ = -1;
};

// Runs `argv` to completion; returns its exit code and stdout + stderr.
struct RunOutput {
  int exit_code = -1;
  std::string output;
};
absl::StatusOr<RunOutput> RunAndCapture(const std::vector<std::string>& argv);

// VmRSS and VmHWM (peak) of a process, in bytes; 0 when unreadable.
struct MemoryUse {
  uint64_t rss = 0;
  uint64_t peak = 0;
};
MemoryUse ProcessMemory(pid_t pid);  // pid 0 = this process.

// CPU time (user + system), in seconds: of process `pid` (pid 0 = this
// process; 0 when unreadable), of this process's children that have been
// waited for, and of one of this process's threads.
double ProcessCpuSeconds(pid_t pid);
double ReapedChildrenCpuSeconds();
// CPU time the whole machine has spent busy (not idle or waiting for I/O)
// since boot, summed over its CPUs, from /proc/stat; 0 when unreadable.
double MachineBusyCpuSeconds();
// The busy clock ticks of /proc/stat's first line ("cpu  user nice system
// idle iowait irq softirq steal ..."): all but idle and iowait. 0 when the
// line is not that line.
uint64_t BusyTicksOfStatLine(absl::string_view line);
double ThreadCpuSeconds(pthread_t thread);

// Waits (up to `longest`) until the machine has been idle for 100 ms (busy
// under 15% of one CPU); returns how long it stayed busy and the CPU it
// spent meanwhile. A timed run adds both, so that the work it left running
// (a store's flushes and compactions) counts for it, not for whatever runs
// next.
struct MachineSettling {
  double seconds = 0;
  double cpu_seconds = 0;
};
MachineSettling SettleMachine(absl::Duration longest);

// Raises RLIMIT_NOFILE to at least `wanted` (up to the hard limit). Returns
// the soft limit now in force.
uint64_t RaiseOpenFileLimit(uint64_t wanted);

// A fresh directory `<parent>/<prefix>-XXXXXX` (parent: the system temp dir
// when empty), removed on destruction unless `keep`.
class ScratchDir {
 public:
  static absl::StatusOr<std::unique_ptr<ScratchDir>> Create(const std::string& parent,
                                                            const std::string& prefix, bool keep);
  ~ScratchDir();
  const std::string& path() const { return path_; }

 private:
  ScratchDir(std::string path, bool keep) : path_(std::move(path)), keep_(keep) {}
  const std::string path_;
  const bool keep_;
};

}  // namespace keel::bench

#endif  // KEEL_CMD_KEEL_BENCH_BENCH_PROCESS_H_
