// `keel-bench sse`: SSE fan-out latency and memory, and SSE catch-up speed
// (issue 4, "Benchmarks"), against a `keel daemon` child process so that the
// daemon's memory is measured alone (the keel binary of --keel; by default
// the one of the same build, KeelProgramBeside):
//
//   1. fan-out: N concurrent SSE connections (default 10,000) on one stream
//      from a client with few threads (Asio connects; each reader thread
//      polls an epoll set of its own with one read buffer, so the client
//      itself stays small; SseClients::ReadLoop says why it polls); 16
//      open-loop publishers POST 100 events/s for ~20 s, each carrying its
//      publish time (steady clock, ns) in its data. Every client parses the
//      `data:` JSON of every frame, checks the sequence (in order, none
//      missing or repeated) and records publish-to-receive latency. Reported:
//      p50/p99/max latency, deliveries received vs expected, the daemon's RSS
//      (VmRSS sampled during the run and VmHWM). Targets: p99 <= 200 ms,
//      RSS <= 1 GiB.
//   2. catch-up: 1,000,000 events are published in batches through the API,
//      then one SSE client connects with after=earliest and reads them all;
//      events/s from the request to the last event. Target >= 300k/s.
//
// A lost, repeated or reordered event is an error (exit 1); a missed target
// is only printed.
#include <algorithm>
#include <csignal>
#include <filesystem>
#include <ostream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "keel/cmd/keel-bench/bench_mode.h"
#include "keel/cmd/keel-bench/bench_process.h"
#include "keel/cmd/keel-bench/bench_report.h"
#include "keel/cmd/keel-bench/http_load.h"
#include "keel/cmd/keel-bench/keel_daemon.h"
#include "keel/cmd/keel-bench/open_loop_publisher.h"
#include "keel/cmd/keel-bench/sse_clients.h"
#include "keel/cmd/keel/server/server.h"
#include "keel/core/mutex.h"
#include "keel/core/status_macros.h"

namespace keel::bench {
namespace {

namespace fs = std::filesystem;

constexpr char kFanoutStream[] = "fanout";
constexpr char kCatchUpStream[] = "catchup";

struct SseOptions {
  std::string keel;  // The keel binary run as the daemon.
  bool quick = false;
  std::string dir;
  bool keep = false;
  int connections = 10'000;
  int client_threads = 2;
  int connect_parallel = 256;
  int publishers = 16;
  double rate = 100;
  double seconds = 20;
  uint64_t catchup_events = 1'000'000;
  uint64_t catchup_batch = 1000;
  int catchup_publishers = 4;
  uint64_t payload_bytes = 100;
  std::string sync = "always";
  int io_threads = 2;
  std::string flush;  // The daemon's --sse-flush; empty: its default.
  int sse_threads = server::DefaultSseThreads();  // The daemon's --sse-threads.
  double drain_timeout = 30;
  bool fanout = true;
  bool catchup = true;
};

template <typename T>
T Pick(const po::variables_map& vars, const char* name, bool quick, T quick_value) {
  if (quick && (vars.count(name) == 0 || vars[name].defaulted())) return quick_value;
  return vars[name].as<T>();
}

absl::StatusOr<SseOptions> OptionsFrom(const po::variables_map& vars) {
  SseOptions o;
  if (vars.count("keel")) {
    o.keel = FindProgram(vars["keel"].as<std::string>());
    if (o.keel.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--keel: '", vars["keel"].as<std::string>(), "' is not an executable program"));
    }
  } else {
    o.keel = KeelProgramBeside(SelfExecutable());
    if (o.keel.empty()) {
      return absl::InvalidArgumentError(
          "cannot find the keel binary (next to keel-bench, in the build tree's cmd/keel/ or "
          "on PATH); name it with --keel");
    }
  }
  o.quick = vars.count("quick") > 0;
  const bool q = o.quick;
  if (vars.count("dir")) o.dir = vars["dir"].as<std::string>();
  o.keep = vars.count("keep") > 0;
  o.connections = Pick<int>(vars, "sse-connections", q, 200);
  o.client_threads = vars["sse-client-threads"].as<int>();
  o.rate = vars["sse-rate"].as<double>();
  o.publishers = vars["sse-publishers"].as<int>();
  o.seconds = Pick<double>(vars, "sse-seconds", q, 3.0);
  o.catchup_events = Pick<uint64_t>(vars, "sse-catchup-events", q, 20'000);
  o.catchup_batch = vars["sse-catchup-batch"].as<uint64_t>();
  o.payload_bytes = vars["sse-payload-bytes"].as<uint64_t>();
  o.sync = vars["sse-sync"].as<std::string>();
  o.io_threads = vars["sse-io-threads"].as<int>();
  o.flush = vars["sse-flush"].as<std::string>();
  o.sse_threads = vars["sse-threads"].as<int>();
  o.drain_timeout = vars["sse-drain-timeout"].as<double>();
  const std::string cases = vars["sse-cases"].as<std::string>();
  o.fanout = cases.find("fanout") != std::string::npos;
  o.catchup = cases.find("catchup") != std::string::npos;
  if (!o.fanout && !o.catchup) return absl::InvalidArgumentError("--sse-cases: fanout, catchup");
  if (o.sync != "none" && o.sync != "always" && o.sync != "interval") {
    return absl::InvalidArgumentError("--sse-sync: none, interval or always");
  }
  if (o.connections < 1 || o.publishers < 1 || o.client_threads < 1 || o.io_threads < 1 || o.sse_threads < 1 ||
      o.rate <= 0 || o.seconds <= 0 || o.catchup_events < 1 || o.catchup_batch < 1 ||
      o.payload_bytes > 10'000) {
    return absl::InvalidArgumentError("counts and durations must be positive");
  }
  return o;
}

// ---------------------------------------------------------------- daemon

using Daemon = KeelDaemon;

absl::StatusOr<Daemon> StartDaemon(const SseOptions& o, const std::string& root) {
  std::vector<std::string> args = {"--data-dir",    (fs::path(root) / "data").string(),
                                   "--sync",        o.sync,
                                   "--io-threads",  absl::StrCat(o.io_threads),
                                   "--sse-threads", absl::StrCat(o.sse_threads),
                                   "--log-level",   "warn"};
  if (!o.flush.empty()) args.insert(args.end(), {"--sse-flush", o.flush});
  return StartKeelDaemon(o.keel, args, root, "daemon");
}

// ---------------------------------------------------------------- cases

struct FanoutResult {
  int connections = 0;
  uint64_t events = 0;
  uint64_t expected = 0;
  uint64_t received = 0;
  uint64_t incomplete_clients = 0;
  Histogram latency;
  std::vector<Histogram> latency_by_second;
  double publish_seconds = 0;
  double max_publish_lag_seconds = 0;
  double achieved_rate = 0;
  double connect_seconds = 0;
  MemoryUse daemon_before;      // After the connections opened, before publishing.
  uint64_t daemon_rss_max = 0;  // Sampled VmRSS during the run.
  MemoryUse daemon_after;
  MemoryUse client;
};

absl::StatusOr<FanoutResult> RunFanout(const SseOptions& o, Daemon& daemon, std::ostream& out) {
  FanoutResult result;
  SseClients::Config config;
  config.port = daemon.port;
  config.stream = kFanoutStream;
  config.connections = o.connections;
  config.threads = o.client_threads;
  config.connect_parallel = o.connect_parallel;
  config.record_latency = true;
  SseClients clients(config);
  const pid_t pid = daemon.process.pid();
  auto sample = [&] {
    result.daemon_rss_max = std::max(result.daemon_rss_max, ProcessMemory(pid).rss);
  };

  out << "  opening " << Thousands(o.connections) << " SSE connections ... " << std::flush;
  Stopwatch connect_watch;
  clients.Start();
  const absl::Time connect_deadline = absl::Now() + absl::Seconds(60 + o.connections / 200);
  while (clients.open() + clients.failed_to_open() < o.connections) {
    if (absl::Now() >= connect_deadline) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  result.connect_seconds = connect_watch.Seconds();
  if (clients.open() != o.connections) {
    return absl::UnavailableError(absl::StrCat(
        clients.open(), " of ", o.connections, " SSE connections opened after ",
        Duration(result.connect_seconds), "; first failure: ", clients.first_failure()));
  }
  result.connections = clients.open();
  sample();
  result.daemon_before = ProcessMemory(pid);
  out << Duration(result.connect_seconds) << "; daemon RSS " << Bytes(result.daemon_before.rss)
      << "\n"
      << std::flush;

  // The publishers: open loop (PublishOpenLoop).
  const uint64_t events = static_cast<uint64_t>(o.rate * o.seconds + 0.5);
  result.events = events;
  result.expected = events * static_cast<uint64_t>(o.connections);
  out << "  publishing " << Thousands(events) << " events at " << o.rate << "/s from "
      << o.publishers << " open-loop publisher connections ... " << std::flush;
  OpenLoopOptions schedule;
  schedule.port = daemon.port;
  schedule.stream = kFanoutStream;
  schedule.events = events;
  schedule.rate = o.rate;
  schedule.publishers = o.publishers;
  schedule.payload_bytes = o.payload_bytes;
  KEEL_ASSIGN_OR_RETURN(const OpenLoopResult published, PublishOpenLoop(schedule, sample));
  result.publish_seconds = published.publish_seconds;
  result.max_publish_lag_seconds = published.max_lag_seconds;
  result.achieved_rate = published.achieved_rate;
  out << Duration(result.publish_seconds) << " (achieved "
      << absl::StrFormat("%.1f", result.achieved_rate) << " events/s; latest send "
      << Duration(result.max_publish_lag_seconds) << " behind schedule)\n"
      << std::flush;

  // Wait for every delivery (or for progress to stop).
  out << "  draining ... " << std::flush;
  uint64_t last_delivered = clients.delivered();
  absl::Time last_progress = absl::Now();
  const absl::Time drain_start = absl::Now();
  while (clients.delivered() < result.expected && clients.failures() == 0) {
    sample();
    absl::SleepFor(absl::Milliseconds(50));
    const uint64_t now = clients.delivered();
    if (now != last_delivered) {
      last_delivered = now;
      last_progress = absl::Now();
    } else if (absl::Now() - last_progress > absl::Seconds(o.drain_timeout)) {
      break;
    }
  }
  out << Duration(absl::ToDoubleSeconds(absl::Now() - drain_start)) << "\n" << std::flush;
  sample();
  result.daemon_after = ProcessMemory(pid);
  result.client = ProcessMemory(0);
  clients.Stop();
  result.received = clients.delivered();
  for (const auto& client : clients.clients()) {
    if (client->received() != events) ++result.incomplete_clients;
  }
  result.latency = clients.MergedLatency();
  result.latency_by_second = clients.MergedLatencyBySecond();
  if (clients.failures() > 0) {
    return absl::InternalError(absl::StrCat(
        clients.failures(), " SSE client(s) failed; first: ", clients.first_failure()));
  }
  return result;
}

struct CatchUpResult {
  uint64_t events = 0;
  double publish_seconds = 0;
  double read_seconds = 0;
  uint64_t received = 0;
};

absl::StatusOr<CatchUpResult> RunCatchUp(const SseOptions& o, Daemon& daemon, std::ostream& out) {
  CatchUpResult result;
  result.events = o.catchup_events;
  // Preload through the API, in batches.
  const uint64_t requests = (o.catchup_events + o.catchup_batch - 1) / o.catchup_batch;
  const uint64_t batch = o.catchup_events / requests;
  if (batch * requests != o.catchup_events) {
    return absl::InvalidArgumentError("--sse-catchup-events must be a multiple of the batch");
  }
  std::string body = "[";
  const std::string pad(o.payload_bytes, 'c');
  for (uint64_t i = 0; i < batch; ++i) {
    if (i > 0) body += ",";
    absl::StrAppend(&body, "{\"type\":\"bench.catchup\",\"data\":\"", pad, "\"}");
  }
  body += "]";
  LoadOptions load;
  load.port = daemon.port;
  load.connections = static_cast<int>(std::min<uint64_t>(o.catchup_publishers, requests));
  load.threads = 1;
  load.request =
      JsonPostRequest("127.0.0.1", absl::StrCat("/v1/streams/", kCatchUpStream, "/events"), body);
  load.total_requests = requests;
  out << "  publishing " << Thousands(o.catchup_events) << " events in batches of " << batch
      << " ... " << std::flush;
  KEEL_ASSIGN_OR_RETURN(LoadResult loaded, RunHttpLoad(load));
  if (loaded.good != requests || loaded.bad > 0 || loaded.io_errors > 0) {
    return absl::InternalError(absl::StrCat("catch-up preload: ", loaded.good, " of ", requests,
                                            " batches acknowledged; ", loaded.first_bad_response));
  }
  result.publish_seconds = loaded.seconds;
  out << Duration(loaded.seconds) << " ("
      << EventsPerSecond(static_cast<double>(o.catchup_events) / loaded.seconds) << ")\n"
      << "  reading them over one SSE connection from earliest ... " << std::flush;

  SseClients::Config config;
  config.port = daemon.port;
  config.stream = kCatchUpStream;
  config.after = "earliest";
  config.connections = 1;
  config.threads = 1;
  config.record_latency = false;
  SseClients client(config);
  const uint64_t start_ns = SteadyNowNanos();
  client.Start();
  uint64_t last = 0;
  absl::Time last_progress = absl::Now();
  while (client.delivered() < o.catchup_events && client.failures() == 0) {
    absl::SleepFor(absl::Milliseconds(5));
    const uint64_t now = client.delivered();
    if (now != last) {
      last = now;
      last_progress = absl::Now();
    } else if (absl::Now() - last_progress > absl::Seconds(o.drain_timeout)) {
      break;
    }
  }
  result.read_seconds = static_cast<double>(client.last_event_ns() - start_ns) / 1e9;
  client.Stop();
  result.received = client.delivered();
  if (client.failures() > 0) {
    return absl::InternalError(absl::StrCat("catch-up client failed: ", client.first_failure()));
  }
  out << Duration(result.read_seconds) << "\n" << std::flush;
  return result;
}

// ---------------------------------------------------------------- the mode

class SseBench final : public BenchMode {
 public:
  absl::string_view name() const override { return "sse"; }
  absl::string_view summary() const override {
    return "SSE fan-out (10k connections, 100 ev/s: latency, daemon RSS) and 1M-event catch-up";
  }
  void AddOptions(po::options_description& options) const override {
    options.add_options()("sse-connections", po::value<int>()->default_value(10'000),
                          "concurrent SSE connections of the fan-out case (--quick: 200)")(
        "sse-client-threads", po::value<int>()->default_value(2), "threads of the SSE clients")(
        "sse-rate", po::value<double>()->default_value(100), "fan-out publishes per second")(
        "sse-publishers", po::value<int>()->default_value(16),
        "publisher threads (one connection each) sharing the open-loop schedule")(
        "sse-seconds", po::value<double>()->default_value(20),
        "fan-out publishing time (--quick: 3)")("sse-payload-bytes",
                                                po::value<uint64_t>()->default_value(100),
                                                "padding string in each event's data")(
        "sse-catchup-events", po::value<uint64_t>()->default_value(1'000'000),
        "events the catch-up reader is behind (--quick: 20000)")(
        "sse-catchup-batch", po::value<uint64_t>()->default_value(1000),
        "events per publish request of the catch-up preload")(
        "sse-sync", po::value<std::string>()->default_value("always"),
        "the daemon's --sync (the fan-out rate is low; the preload batches)")(
        "sse-io-threads", po::value<int>()->default_value(2), "the daemon's --io-threads")(
        "sse-flush", po::value<std::string>()->default_value(""),
        "the daemon's --sse-flush (default: the daemon's default)")(
        "sse-threads", po::value<int>()->default_value(server::DefaultSseThreads()),
        "the daemon's --sse-threads")(
        "sse-drain-timeout", po::value<double>()->default_value(30),
        "seconds without progress after which missing deliveries count as lost")(
        "sse-cases", po::value<std::string>()->default_value("fanout,catchup"),
        "cases to run: fanout, catchup")(
        "keel", po::value<std::string>(),
        "the keel binary to run as the daemon (default: the keel of the same build: next to "
        "keel-bench, else the build tree's cmd/keel/keel, else keel on PATH)")
        // The generic flags every mode has (bench_mode.h).
        ("quick", "a small smoke run for CI; figures are not meaningful")(
            "dir", po::value<std::string>(),
            "parent directory for the stores (default: the system temp dir)")(
            "keep", "keep the stores instead of removing them");
  }

  int Run(const po::variables_map& vars, BenchIo& io) const override {
    absl::StatusOr<SseOptions> options = OptionsFrom(vars);
    if (!options.ok()) {
      io.err << "keel-bench sse: " << options.status().message() << "\n";
      return kExitUsage;
    }
    absl::Status status = RunAll(*options, io.out);
    if (!status.ok()) {
      io.err << "keel-bench sse: " << status << "\n";
      return kExitFailure;
    }
    return kExitOk;
  }

 private:
  absl::Status RunAll(SseOptions o, std::ostream& out) const;
};

absl::Status SseBench::RunAll(SseOptions o, std::ostream& out) const {
  absl::StatusOr<std::unique_ptr<ScratchDir>> scratch =
      ScratchDir::Create(o.dir, "keel-bench-sse", o.keep);
  if (!scratch.ok()) return scratch.status();
  const std::string root = (*scratch)->path();

  // Each connection needs a descriptor here and one in the daemon (which
  // inherits this limit).
  const uint64_t wanted = static_cast<uint64_t>(o.connections) + 512;
  const uint64_t limit = RaiseOpenFileLimit(wanted);
  std::string limit_note = absl::StrCat("RLIMIT_NOFILE ", limit);
  if (o.fanout && limit < wanted) {
    const int fit = static_cast<int>(limit > 1024 ? limit - 512 : limit / 2);
    out << "WARNING: cannot raise RLIMIT_NOFILE to " << wanted << " (hard limit " << limit
        << "); the fan-out runs " << fit << " connections instead of " << o.connections << "\n";
    limit_note += absl::StrCat(" (wanted ", wanted, "; connections reduced to ", fit, ")");
    o.connections = fit;
  }

  KEEL_ASSIGN_OR_RETURN(Daemon daemon, StartDaemon(o, root));
  out << "keel-bench sse" << (o.quick ? " --quick (smoke run: figures are not meaningful)" : "")
      << "\n  daemon: child process, pid " << daemon.process.pid() << ": " << daemon.command
      << "\n  clients: " << o.client_threads << " reader thread(s) in this process; " << limit_note
      << "\n  machine: " << std::thread::hardware_concurrency()
      << " CPUs, shared by the daemon, the clients and the publisher\n";

  ResultTable table;
  bool lost = false;
  if (o.fanout) {
    out << "\n[1] fan-out: " << Thousands(o.connections) << " SSE connections on one stream, "
        << o.rate << " events/s for " << o.seconds << " s\n"
        << std::flush;
    KEEL_ASSIGN_OR_RETURN(FanoutResult f, RunFanout(o, daemon, out));
    const double ms = 1e-3;
    out << absl::StrFormat(
        "  deliveries %s of %s (%s events x %s connections)%s; latency p50 %.1f ms, p99 %.1f "
        "ms, max %.1f ms\n"
        "  daemon RSS: %s before publishing, %s at the end, max sampled %s, peak (VmHWM) %s; "
        "client process RSS %s (not counted)\n",
        Thousands(f.received), Thousands(f.expected), Thousands(f.events), Thousands(f.connections),
        f.received == f.expected ? ""
                                 : absl::StrCat(" -- LOST ", Thousands(f.expected - f.received),
                                                " (", f.incomplete_clients, " clients incomplete)"),
        f.latency.Percentile(50) * ms, f.latency.Percentile(99) * ms, f.latency.max() * ms,
        Bytes(f.daemon_before.rss), Bytes(f.daemon_after.rss), Bytes(f.daemon_rss_max),
        Bytes(f.daemon_after.peak), Bytes(f.client.rss));
    out << "  p50/p99 ms by second of send time:";
    for (const Histogram& second : f.latency_by_second) {
      out << absl::StrFormat(" %.0f/%.0f", second.Percentile(50) * ms, second.Percentile(99) * ms);
    }
    out << "\n";
    lost = f.received != f.expected;
    const std::string conns = absl::StrCat(Thousands(f.connections), " conn, ", o.rate, " ev/s");
    table.Add(ResultRow{absl::StrCat("fan-out p50 latency, ", conns),
                        absl::StrFormat("%.1f ms", f.latency.Percentile(50) * ms), "-", 0, "",
                        ResultRow::Goal::kNone, 0});
    table.Add(ResultRow{absl::StrCat("fan-out p99 latency, ", conns),
                        absl::StrFormat("%.1f ms", f.latency.Percentile(99) * ms), "-",
                        std::max(f.latency.Percentile(99) * ms, 0.001), " ms",
                        ResultRow::Goal::kAtMost, 200});
    table.Add(ResultRow{absl::StrCat("fan-out max latency, ", conns),
                        absl::StrFormat("%.1f ms", f.latency.max() * ms), "-", 0, "",
                        ResultRow::Goal::kNone, 0});
    const double achieved = f.achieved_rate;
    table.Add(ResultRow{"fan-out publish rate achieved", absl::StrFormat("%.1f ev/s", achieved),
                        absl::StrFormat("scheduled %.0f ev/s", o.rate), achieved / o.rate, "x",
                        ResultRow::Goal::kAtLeast, 0.95});
    table.Add(ResultRow{"fan-out deliveries (all expected)",
                        absl::StrCat(Thousands(f.received), " of ", Thousands(f.expected)), "-", 0,
                        "", ResultRow::Goal::kNone, 0});
    const uint64_t peak = std::max(f.daemon_after.peak, f.daemon_rss_max);
    table.Add(ResultRow{"fan-out daemon RSS (peak, VmHWM)", Bytes(peak), "-",
                        std::max(static_cast<double>(peak) / (1 << 30), 0.001), " GiB",
                        ResultRow::Goal::kAtMost, 1.0});
  }
  if (o.catchup) {
    out << "\n[2] catch-up: one SSE client " << Thousands(o.catchup_events)
        << " events behind (after=earliest)\n"
        << std::flush;
    KEEL_ASSIGN_OR_RETURN(CatchUpResult c, RunCatchUp(o, daemon, out));
    const double rate = static_cast<double>(c.received) / c.read_seconds;
    out << "  received " << Thousands(c.received) << " of " << Thousands(c.events) << " in order"
        << (c.received == c.events ? "" : " -- LOST some") << "\n";
    lost = lost || c.received != c.events;
    table.Add(ResultRow{absl::StrCat("catch-up ", Thousands(c.events), " events, 1 client"),
                        EventsPerSecond(rate), "-", std::max(rate / 1000, 0.001), "k ev/s",
                        ResultRow::Goal::kAtLeast, 300});
  }
  const MemoryUse daemon_end = ProcessMemory(daemon.process.pid());
  const int exit_code = daemon.process.Stop(SIGTERM, absl::Seconds(30));
  out << "  daemon stopped (exit " << exit_code << "); final RSS " << Bytes(daemon_end.rss)
      << ", peak " << Bytes(daemon_end.peak) << "\n\n";
  const int misses = table.Print(out);
  out << "\nlatency = publisher's steady-clock time in the event data to the client's read of "
         "the frame; RSS is the daemon process alone. "
      << (misses == 0 ? "All targets met." : absl::StrCat(misses, " target(s) missed."))
      << " Targets are printed, not asserted.\n";
  if (lost) return absl::InternalError("events were lost (see above)");
  if (exit_code != 0) {
    return absl::InternalError(
        absl::StrCat("keel daemon exited ", exit_code, "; see ", root, "/daemon.log"));
  }
  return absl::OkStatus();
}

}  // namespace

std::unique_ptr<BenchMode> NewSseBench() { return std::make_unique<SseBench>(); }

}  // namespace keel::bench
