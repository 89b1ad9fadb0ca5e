// CrashingDaemon: a `keel daemon` child process that the crash loop kills
// with SIGKILL and starts again on the same data directory, keeping its
// Endpoint current for the clients.
#ifndef KEEL_TESTS_CRASH_CRASHING_DAEMON_H_
#define KEEL_TESTS_CRASH_CRASHING_DAEMON_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/crash/endpoint.h"

namespace keel::crash_test {

class CrashingDaemon {
 public:
  // `flags` are passed to every start (the sync mode, the declarations).
  CrashingDaemon(std::string data_dir, std::string log_dir, std::vector<std::string> flags);

  absl::Status Start();
  // SIGKILL, wait for the exit, start again: on the same port when it can
  // be bound again, else on a new one.
  absl::Status KillAndRestart();
  // SIGTERM; the exit code (0 for a clean shutdown).
  absl::StatusOr<int> Stop();

  const Endpoint& endpoint() const { return endpoint_; }
  pid_t pid() const { return process_.pid(); }
  int kills() const { return kills_; }
  int moves() const { return moves_; }
  std::string Logs() const { return process_.Logs(); }

 private:
  daemon_test::DaemonProcess process_;
  std::vector<std::string> flags_;
  Endpoint endpoint_;
  int kills_ = 0;
  int moves_ = 0;  // Restarts that could not keep the port.
};

}  // namespace keel::crash_test

#endif  // KEEL_TESTS_CRASH_CRASHING_DAEMON_H_
