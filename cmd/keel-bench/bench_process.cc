#include "keel/cmd/keel-bench/bench_process.h"

#include <filesystem>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

extern char** environ;

namespace keel::bench {
namespace {

int ExitCodeOf(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return -1;
}

std::vector<char*> Argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const std::string& arg : argv) out.push_back(const_cast<char*>(arg.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::string FindProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  for (absl::string_view dir :
       absl::StrSplit(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin", ':')) {
    if (dir.empty()) continue;
    std::string candidate = absl::StrCat(dir, "/", name);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string SelfExecutable() {
  char buffer[4096];
  ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (n <= 0) return "";
  return std::string(buffer, static_cast<size_t>(n));
}

std::string KeelProgramBeside(const std::string& bench_path) {
  if (!bench_path.empty()) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(bench_path).parent_path();
    for (const fs::path& candidate : {dir / "keel", dir.parent_path() / "keel" / "keel"}) {
      std::error_code ec;
      if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) {
        return candidate.lexically_normal().string();
      }
    }
  }
  return FindProgram("keel");
}

absl::Status WaitForListener(uint16_t port, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return absl::UnavailableError(absl::StrCat("socket: ", std::strerror(errno)));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(port);
    const int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    ::close(fd);
    if (rc == 0) return absl::OkStatus();
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("nothing listens on 127.0.0.1:", port, " after ",
                       absl::FormatDuration(timeout)));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

absl::StatusOr<ChildProcess> ChildProcess::Start(const std::vector<std::string>& argv,
                                                 const std::string& log_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string sink = log_path.empty() ? "/dev/null" : log_path;
  posix_spawn_file_actions_addopen(&actions, 1, sink.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // The child must not inherit a blocked SIGINT/SIGTERM mask or ignored signals.
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);
  sigset_t all;
  sigfillset(&all);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args = Argv(argv);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) {
    return absl::UnavailableError(absl::StrCat("cannot start ", argv[0], ": ", std::strerror(rc)));
  }
  ChildProcess child;
  child.pid_ = pid;
  return child;
}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    if (pid_ > 0) Stop(SIGKILL, absl::Seconds(5));
    pid_ = other.pid_;
    other.pid_ = -1;
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) Stop(SIGKILL, absl::Seconds(5));
}

int ChildProcess::Stop(int signal, absl::Duration timeout) {
  if (pid_ <= 0) return -1;
  ::kill(pid_, signal);
  const absl::Time deadline = absl::Now() + timeout;
  int status = 0;
  while (true) {
    pid_t done = ::waitpid(pid_, &status, WNOHANG);
    if (done == pid_) break;
    if (done < 0) {
      pid_ = -1;
      return -1;
    }
    if (absl::Now() >= deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      break;
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  pid_ = -1;
  return ExitCodeOf(status);
}

absl::StatusOr<RunOutput> RunAndCapture(const std::vector<std::string>& argv) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return absl::UnavailableError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  std::vector<char*> args = Argv(argv);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (rc != 0) {
    ::close(pipe_fds[0]);
    return absl::UnavailableError(absl::StrCat("cannot run ", argv[0], ": ", std::strerror(rc)));
  }
  RunOutput result;
  char buffer[8192];
  while (true) {
    ssize_t n = ::read(pipe_fds[0], buffer, sizeof(buffer));
    if (n > 0) {
      result.output.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.exit_code = ExitCodeOf(status);
  return result;
}

MemoryUse ProcessMemory(pid_t pid) {
  MemoryUse use;
  std::ifstream status(pid == 0 ? std::string("/proc/self/status")
                                : absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  auto kib = [](const std::string& text) {
    uint64_t value = 0;
    std::istringstream in(text.substr(text.find(':') + 1));
    in >> value;
    return value * 1024;
  };
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) use.rss = kib(line);
    if (line.rfind("VmHWM:", 0) == 0) use.peak = kib(line);
  }
  return use;
}

namespace {

double Seconds(const timeval& time) { return time.tv_sec + time.tv_usec / 1e6; }

double UsageSeconds(int who) {
  rusage usage{};
  if (::getrusage(who, &usage) != 0) return 0;
  return Seconds(usage.ru_utime) + Seconds(usage.ru_stime);
}

}  // namespace

double ProcessCpuSeconds(pid_t pid) {
  if (pid == 0) return UsageSeconds(RUSAGE_SELF);
  // /proc/<pid>/stat: utime and stime are fields 14 and 15, in clock ticks;
  // the command name (field 2) may hold spaces, so count after its ')'.
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t name_end = text.rfind(')');
  if (name_end == std::string::npos || name_end + 2 > text.size()) return 0;
  std::vector<std::string> fields = absl::StrSplit(text.substr(name_end + 2), ' ');
  uint64_t user = 0, system = 0;  // Field 3 (the state) is fields[0].
  if (fields.size() < 13 || !absl::SimpleAtoi(fields[11], &user) ||
      !absl::SimpleAtoi(fields[12], &system)) {
    return 0;
  }
  return static_cast<double>(user + system) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

double ReapedChildrenCpuSeconds() { return UsageSeconds(RUSAGE_CHILDREN); }

uint64_t BusyTicksOfStatLine(absl::string_view line) {
  std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
  if (fields.size() < 9 || fields[0] != "cpu") return 0;
  uint64_t busy = 0;
  for (size_t i : {1, 2, 3, 6, 7, 8}) {  // Not idle (4) or iowait (5).
    uint64_t ticks = 0;
    if (!absl::SimpleAtoi(fields[i], &ticks)) return 0;
    busy += ticks;
  }
  return busy;
}

double MachineBusyCpuSeconds() {
  std::ifstream stat("/proc/stat");
  std::string line;
  if (!std::getline(stat, line)) return 0;
  return static_cast<double>(BusyTicksOfStatLine(line)) /
         static_cast<double>(::sysconf(_SC_CLK_TCK));
}

MachineSettling SettleMachine(absl::Duration longest) {
  constexpr double kQuietCpuSeconds = 0.015;  // Per 100 ms probe: 15% of one CPU.
  const double cpu_before = MachineBusyCpuSeconds();
  const absl::Time start = absl::Now();
  absl::Time quiet_from = start + longest;
  double cpu = cpu_before;  // Each probe starts where the last one ended.
  while (absl::Now() < start + longest) {
    const absl::Time probe_start = absl::Now();
    absl::SleepFor(absl::Milliseconds(100));
    const double probe_before = cpu;
    cpu = MachineBusyCpuSeconds();
    if (cpu - probe_before < kQuietCpuSeconds) {
      quiet_from = probe_start;
      break;
    }
  }
  return MachineSettling{absl::ToDoubleSeconds(quiet_from - start), cpu - cpu_before};
}

double ThreadCpuSeconds(pthread_t thread) {
  clockid_t clock;
  timespec time{};
  if (::pthread_getcpuclockid(thread, &clock) != 0 || ::clock_gettime(clock, &time) != 0) {
    return 0;
  }
  return time.tv_sec + time.tv_nsec / 1e9;
}

uint64_t RaiseOpenFileLimit(uint64_t wanted) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur < wanted) {
    rlimit raised = limit;
    raised.rlim_cur = std::min<rlim_t>(wanted, limit.rlim_max);
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur;
}

absl::StatusOr<std::unique_ptr<ScratchDir>> ScratchDir::Create(const std::string& parent_dir,
                                                              const std::string& prefix,
                                                              bool keep) {
  std::error_code ec;
  const std::filesystem::path parent =
      parent_dir.empty() ? std::filesystem::temp_directory_path() : std::filesystem::path(parent_dir);
  std::filesystem::create_directories(parent, ec);
  std::string path = (parent / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(path.data()) == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot create a directory in ", parent.string()));
  }
  return std::unique_ptr<ScratchDir>(new ScratchDir(std::move(path), keep));
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  if (!keep_) std::filesystem::remove_all(path_, ignored);
}

}  // namespace keel::bench
