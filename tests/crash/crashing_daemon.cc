#include "keel/tests/crash/crashing_daemon.h"

#include <csignal>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace keel::crash_test {

CrashingDaemon::CrashingDaemon(std::string data_dir, std::string log_dir,
                               std::vector<std::string> flags)
    : process_(std::move(data_dir), std::move(log_dir)), flags_(std::move(flags)) {}

absl::Status CrashingDaemon::Start() {
  if (absl::Status started = process_.Start(0, flags_); !started.ok()) return started;
  endpoint_.Started(process_.port());
  return absl::OkStatus();
}

absl::Status CrashingDaemon::KillAndRestart() {
  absl::StatusOr<int> killed = process_.Terminate(SIGKILL);
  if (!killed.ok()) return killed.status();
  // A daemon the kill found already gone died on its own (a failed check, a
  // sanitizer's report): the loop would only restart it and go on.
  if (*killed != -1) {
    return absl::InternalError(absl::StrCat("keel daemon exited by itself (status ", *killed,
                                            ") before it was killed:\n", process_.Logs()));
  }
  ++kills_;
  // While the port is free another process may take it (the kernel hands it
  // out as any connection's local port); then the daemon cannot bind it and
  // exits, and a new port is the way on. Any other failure is the test's.
  const uint16_t port = endpoint_.port();
  absl::Status started = process_.Start(port, flags_);
  if (started.ok()) {
    endpoint_.Started(port);
    return absl::OkStatus();
  }
  if (!absl::StrContains(started.message(), absl::StrCat("cannot bind 127.0.0.1:", port))) {
    return started;
  }
  ++moves_;
  return Start();
}

absl::StatusOr<int> CrashingDaemon::Stop() { return process_.Terminate(SIGTERM); }

}  // namespace keel::crash_test
