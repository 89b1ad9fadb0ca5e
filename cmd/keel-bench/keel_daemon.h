// A `keel daemon` child process for the network benchmarks (`keel-bench sse`
// and `keel-bench jetstream`): started on a free loopback port, which it
// reports in a port file, so that its memory and CPU are its own.
//
// Thread safety: a KeelDaemon is used by one thread.
#ifndef KEEL_CMD_KEEL_BENCH_KEEL_DAEMON_H_
#define KEEL_CMD_KEEL_BENCH_KEEL_DAEMON_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "keel/cmd/keel-bench/bench_process.h"

namespace keel::bench {

struct KeelDaemon {
  ChildProcess process;
  uint16_t port = 0;
  std::string command;  // The command line, for the report.
  std::string log;      // Where its output goes.
};

// Runs `<keel> daemon --listen 127.0.0.1:0 --port-file <dir>/<name>.port
// <args>...` with its output in <dir>/<name>.log and waits until it listens.
absl::StatusOr<KeelDaemon> StartKeelDaemon(const std::string& keel,
                                           const std::vector<std::string>& args,
                                           const std::string& dir, const std::string& name);

}  // namespace keel::bench

#endif  // KEEL_CMD_KEEL_BENCH_KEEL_DAEMON_H_
