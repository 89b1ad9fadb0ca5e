#include "keel/cmd/keel-bench/jetstream_fanout.h"

#include <csignal>
#include <memory>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "keel/cmd/keel-bench/bench_report.h"
#include "keel/cmd/keel-bench/keel_daemon.h"
#include "keel/cmd/keel-bench/sse_clients.h"
#include "keel/core/status_macros.h"

namespace keel::bench {
namespace {

constexpr char kStream[] = "fanout";

}  // namespace

absl::StatusOr<JetStreamFanoutResult> RunJetStreamFanout(const JetStreamFanoutOptions& o,
                                                         std::ostream& out) {
  JetStreamFanoutResult result;
  // A bus of its own, so that the stream starts at sequence 1 and the
  // readers (which start at the newest event) expect exactly that.
  const std::string bus = absl::StrCat("fanout-", absl::ToUnixMillis(absl::Now()));
  const std::vector<std::string> args = {"--driver",        "jetstream",
                                         "--driver-option", absl::StrCat("servers=", o.servers),
                                         "--driver-option", absl::StrCat("bus=", bus),
                                         "--io-threads",    "2",
                                         "--log-level",     "warn"};
  KeelDaemon daemons[2];
  for (int d = 0; d < 2; ++d) {
    KEEL_ASSIGN_OR_RETURN(daemons[d],
                          StartKeelDaemon(o.keel, args, o.dir, d == 0 ? "daemon-a" : "daemon-b"));
    result.commands[d] = daemons[d].command;
  }
  std::unique_ptr<SseClients> clients[2];
  for (int d = 0; d < 2; ++d) {
    SseClients::Config config;
    config.port = daemons[d].port;
    config.stream = kStream;
    config.connections = d == 0 ? o.connections / 2 : o.connections - o.connections / 2;
    config.threads = std::max(1, o.client_threads / 2);
    config.record_latency = true;
    result.readers[d].connections = config.connections;
    clients[d] = std::make_unique<SseClients>(config);
  }
  out << "  opening " << Thousands(o.connections) << " SSE connections ("
      << Thousands(result.readers[0].connections) << " + "
      << Thousands(result.readers[1].connections) << ") ... " << std::flush;
  Stopwatch connect_watch;
  for (auto& c : clients) c->Start();
  const absl::Time connect_deadline = absl::Now() + absl::Seconds(60 + o.connections / 200);
  auto settled = [&] {
    for (int d = 0; d < 2; ++d) {
      if (clients[d]->open() + clients[d]->failed_to_open() < result.readers[d].connections) {
        return false;
      }
    }
    return true;
  };
  while (!settled() && absl::Now() < connect_deadline) absl::SleepFor(absl::Milliseconds(20));
  result.connect_seconds = connect_watch.Seconds();
  for (int d = 0; d < 2; ++d) {
    if (clients[d]->open() != result.readers[d].connections) {
      return absl::UnavailableError(absl::StrCat(
          clients[d]->open(), " of ", result.readers[d].connections,
          " SSE connections opened on daemon ", d, " after ", Duration(result.connect_seconds),
          "; first failure: ", clients[d]->first_failure()));
    }
  }
  out << Duration(result.connect_seconds) << "\n" << std::flush;

  result.events = static_cast<uint64_t>(o.rate * o.seconds + 0.5);
  out << "  publishing " << Thousands(result.events) << " events at " << o.rate
      << "/s through the first daemon from " << o.publishers << " open-loop connections ... "
      << std::flush;
  OpenLoopOptions schedule;
  schedule.port = daemons[0].port;
  schedule.stream = kStream;
  schedule.type = "bench.jetstream";
  schedule.events = result.events;
  schedule.rate = o.rate;
  schedule.publishers = o.publishers;
  schedule.payload_bytes = o.payload_bytes;
  KEEL_ASSIGN_OR_RETURN(result.published, PublishOpenLoop(schedule, [] {}));
  out << Duration(result.published.publish_seconds) << "\n  draining ... " << std::flush;

  uint64_t expected = 0;
  for (int d = 0; d < 2; ++d) {
    result.readers[d].expected =
        result.events * static_cast<uint64_t>(result.readers[d].connections);
    expected += result.readers[d].expected;
  }
  auto delivered = [&] { return clients[0]->delivered() + clients[1]->delivered(); };
  auto failures = [&] { return clients[0]->failures() + clients[1]->failures(); };
  uint64_t last_delivered = delivered();
  absl::Time last_progress = absl::Now();
  const absl::Time drain_start = absl::Now();
  while (delivered() < expected && failures() == 0) {
    absl::SleepFor(absl::Milliseconds(50));
    const uint64_t now = delivered();
    if (now != last_delivered) {
      last_delivered = now;
      last_progress = absl::Now();
    } else if (absl::Now() - last_progress > absl::Seconds(o.drain_timeout)) {
      break;
    }
  }
  out << Duration(absl::ToDoubleSeconds(absl::Now() - drain_start)) << "\n" << std::flush;
  for (int d = 0; d < 2; ++d) {
    DaemonReaders& readers = result.readers[d];
    readers.daemon = ProcessMemory(daemons[d].process.pid());
    clients[d]->Stop();
    readers.received = clients[d]->delivered();
    for (const auto& client : clients[d]->clients()) {
      if (client->received() != result.events) ++readers.incomplete_clients;
    }
    readers.latency = clients[d]->MergedLatency();
    result.latency.Merge(readers.latency);
  }
  for (int d = 0; d < 2; ++d) {
    if (clients[d]->failures() > 0) {
      return absl::InternalError(absl::StrCat(clients[d]->failures(), " SSE client(s) of daemon ",
                                              d, " failed; first: ", clients[d]->first_failure()));
    }
  }
  for (int d = 0; d < 2; ++d) {
    const int exit_code = daemons[d].process.Stop(SIGTERM, absl::Seconds(30));
    if (exit_code != 0) {
      return absl::InternalError(
          absl::StrCat("keel daemon exited ", exit_code, "; see ", daemons[d].log));
    }
  }
  return result;
}

}  // namespace keel::bench
