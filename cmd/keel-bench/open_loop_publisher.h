// PublishOpenLoop: the fan-out benchmarks' publishers. Event i is due at
// start + i / rate and is sent by thread i % publishers over HTTP on its own
// keep-alive connection, so a slow publish delays only that thread's next
// turn, not the schedule. Each event carries the steady-clock time it was
// actually sent, last in its data (`{"n":i,"pad":"...","ts":<ns>}`), where
// SseClients looks for it.
//
// Thread safety: safe anywhere; it runs threads of its own.
#ifndef KEEL_CMD_KEEL_BENCH_OPEN_LOOP_PUBLISHER_H_
#define KEEL_CMD_KEEL_BENCH_OPEN_LOOP_PUBLISHER_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"

namespace keel::bench {

struct OpenLoopOptions {
  uint16_t port = 0;  // The daemon's, on 127.0.0.1.
  std::string stream;
  std::string type = "bench.sse";
  uint64_t events = 0;
  double rate = 100;  // Events per second.
  int publishers = 16;
  uint64_t payload_bytes = 100;  // The padding in each event's data.
};

struct OpenLoopResult {
  double publish_seconds = 0;  // From the schedule's start to the last answer.
  double max_lag_seconds = 0;  // The latest send behind its due time.
  double achieved_rate = 0;    // Sends per second over the schedule.
};

// Publishes the schedule; every publish must be answered 201. Calls
// `while_waiting` every 100 ms on the calling thread meanwhile.
absl::StatusOr<OpenLoopResult> PublishOpenLoop(const OpenLoopOptions& options,
                                               const std::function<void()>& while_waiting);

}  // namespace keel::bench

#endif  // KEEL_CMD_KEEL_BENCH_OPEN_LOOP_PUBLISHER_H_
