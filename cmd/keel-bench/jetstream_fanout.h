// The fan-out case of `keel-bench jetstream`: two `keel daemon --driver
// jetstream` processes on one bus, SSE connections split between them,
// events published over HTTP through the first; latency and deliveries at
// the readers of each daemon. A lost, repeated or reordered event fails
// the clients (SseClients).
//
// Thread safety: safe anywhere; it runs threads and processes of its own.
#ifndef KEEL_CMD_KEEL_BENCH_JETSTREAM_FANOUT_H_
#define KEEL_CMD_KEEL_BENCH_JETSTREAM_FANOUT_H_

#include <cstdint>
#include <iosfwd>
#include <string>

#include "absl/status/statusor.h"
#include "keel/cmd/keel-bench/bench_process.h"
#include "keel/cmd/keel-bench/latency_histogram.h"
#include "keel/cmd/keel-bench/open_loop_publisher.h"

namespace keel::bench {

struct JetStreamFanoutOptions {
  std::string keel;          // The keel binary.
  std::string servers;       // NATS URLs of the bus.
  std::string dir;           // For the daemons' port files and logs.
  int connections = 10'000;  // In all, half on each daemon.
  int client_threads = 2;    // In all, half reading each daemon's connections.
  double rate = 100;
  double seconds = 20;
  int publishers = 16;
  uint64_t payload_bytes = 100;
  double drain_timeout = 30;
};

// What the readers of one daemon saw.
struct DaemonReaders {
  int connections = 0;
  uint64_t expected = 0;
  uint64_t received = 0;
  uint64_t incomplete_clients = 0;
  Histogram latency;
  MemoryUse daemon;  // At the end; peak is VmHWM.
};

struct JetStreamFanoutResult {
  std::string commands[2];
  uint64_t events = 0;
  double connect_seconds = 0;
  OpenLoopResult published;
  DaemonReaders readers[2];  // [0] on the daemon that publishes.
  Histogram latency;         // Both together.
};

absl::StatusOr<JetStreamFanoutResult> RunJetStreamFanout(const JetStreamFanoutOptions& options,
                                                         std::ostream& out);

}  // namespace keel::bench

#endif  // KEEL_CMD_KEEL_BENCH_JETSTREAM_FANOUT_H_
