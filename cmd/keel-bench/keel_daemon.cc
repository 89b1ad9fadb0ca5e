#include "keel/cmd/keel-bench/keel_daemon.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "keel/core/status_macros.h"

namespace keel::bench {

absl::StatusOr<KeelDaemon> StartKeelDaemon(const std::string& keel,
                                           const std::vector<std::string>& args,
                                           const std::string& dir, const std::string& name) {
  const std::string port_file = (std::filesystem::path(dir) / (name + ".port")).string();
  std::vector<std::string> argv = {keel,          "daemon",      "--listen",
                                   "127.0.0.1:0", "--port-file", port_file};
  argv.insert(argv.end(), args.begin(), args.end());
  KeelDaemon daemon;
  daemon.command = absl::StrJoin(argv, " ");
  daemon.log = (std::filesystem::path(dir) / (name + ".log")).string();
  KEEL_ASSIGN_OR_RETURN(daemon.process, ChildProcess::Start(argv, daemon.log));
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (true) {
    std::ifstream in(port_file);
    uint32_t port = 0;
    if (in >> port && port > 0) {
      daemon.port = static_cast<uint16_t>(port);
      break;
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("keel daemon did not report its port; see ", daemon.log));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  KEEL_RETURN_IF_ERROR(WaitForListener(daemon.port, absl::Seconds(10)));
  return daemon;
}

}  // namespace keel::bench
