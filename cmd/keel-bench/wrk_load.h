// WrkLoad: drives an HTTP endpoint with `wrk` (Debian package wrk), a
// third-party load generator, so that a figure does not rest on Keel's own
// client alone (http_load.h).
//
// One run is `wrk -t T -c C -d Ns -s <script> URL`, where the Lua script
// makes every request a POST of `body` as application/json. The result is
// parsed from wrk's summary: requests, seconds, non-2xx/3xx responses and
// socket errors (any of those two makes the run a failure for the caller
// to report). wrk does not say how many requests were still in flight when
// it stopped; the caller counts what the server stored instead.
//
// Thread safety: a run blocks its caller; runs are independent.
#ifndef KEEL_CMD_KEEL_BENCH_WRK_LOAD_H_
#define KEEL_CMD_KEEL_BENCH_WRK_LOAD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace keel::bench {

struct WrkOptions {
  std::string wrk_path;  // FindProgram("wrk").
  std::string url;       // e.g. http://127.0.0.1:8080/v1/streams/bench/events
  std::string body;
  int threads = 2;
  int connections = 50;
  double seconds = 6;
  std::string script_dir;  // Where the Lua script is written.
};

struct WrkResult {
  uint64_t requests = 0;  // Answered within the run.
  double seconds = 0;
  uint64_t bad_responses = 0;  // Non-2xx or 3xx.
  uint64_t socket_errors = 0;  // connect + read + write + timeout.
  double client_cpu_seconds = 0;
};

absl::StatusOr<WrkResult> RunWrk(const WrkOptions& options);

// The summary figures of wrk's output (exposed for its test).
absl::StatusOr<WrkResult> ParseWrkOutput(const std::string& output);

}  // namespace keel::bench

#endif  // KEEL_CMD_KEEL_BENCH_WRK_LOAD_H_
