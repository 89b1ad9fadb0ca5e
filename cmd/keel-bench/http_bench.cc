// `keel-bench http`: HTTP publish throughput of an in-process Keel daemon
// against Redis Streams XADD, measured in the same run on the same payload
// (issue 4, "Benchmarks"):
//
//   for each pairing (keel sync=none ~ redis AOF everysec,
//                     keel sync=always ~ redis AOF always), each round:
//     - redis-server on a free loopback port (--appendonly yes --appendfsync
//       MODE --save "") and a Keel daemon in this process (durable driver
//       over LevelDB in a temporary directory, server::Server on
//       127.0.0.1:0), both kept up for the round;
//     - one event per request: `redis-benchmark -c 50 -n N XADD s * f <100
//       bytes>` against the load generator of http_load.h (50 keep-alive
//       connections, one request in flight each, `POST
//       /v1/streams/bench/events` with one JSON event carrying a 100-byte
//       data string), on --http-client-threads threads (2 by default;
//       see kDefaultClientThreads);
//     - batches: the same with -P 16 against a JSON array of 100 events per
//       request.
//
// Each case is cut into --http-slices slices that alternate between the two
// (Redis then Keel, then Keel then Redis, ...): the machine's speed moves
// by tens of percent within a minute, and both sides then meet it at the
// same moments, where a whole Redis window followed by a whole Keel window
// compared two different machines. After each slice the machine is let go
// quiet (Settle): the time and CPU it takes to finish what the slice left
// running (Keel's LevelDB flushes and compactions, Redis's forked AOF
// rewrites) count for that side, and none of it lands in the other side's
// slice. A case's rate is its events over its counted time (the slices and
// their settling), summed over the slices. Each pairing runs --http-rounds
// times on fresh servers and stores; the table shows the median rates and
// the median of the per-round ratios. Rates are events per second (one
// XADD = one event). Every request must be answered 201 and the stream must
// hold exactly the acknowledged events; anything else is an error (exit 1),
// while a missed target is only printed. Without
// redis-server/redis-benchmark the Keel figures are printed, the baseline
// is reported missing and the exit code is 77 (CTest: skipped).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>

#include <filesystem>
#include <optional>
#include <ostream>
#include <random>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/ascii.h"
#include "keel/cmd/keel-bench/bench_mode.h"
#include "keel/cmd/keel-bench/bench_process.h"
#include "keel/cmd/keel-bench/bench_report.h"
#include "keel/cmd/keel-bench/http_load.h"
#include "keel/cmd/keel-bench/wrk_load.h"
#include "keel/cmd/keel/server/api.h"
#include "keel/cmd/keel/server/metrics.h"
#include "keel/cmd/keel/server/server.h"
#include "keel/core/driver_factory.h"
#include "keel/core/status_macros.h"
#include "keel/tests/ports/free_port.h"

namespace keel::bench {
namespace {

namespace fs = std::filesystem;

constexpr int kExitBaselineMissing = 77;  // CTest SKIP_RETURN_CODE.
constexpr char kStream[] = "bench";

// The load generator's threads by default. Both it and the daemon hand out
// connections in turn, so with two each client thread talks to one I/O
// thread. With one client thread the daemon's passes were smaller (a LevelDB
// log write per ~6 requests against ~15) and the two vCPUs 10-14% idle
// (5-8% during Redis's slices); with two, single-event publishes went from
// about parity with Redis to 1.1-1.25x.
// redis-benchmark was no faster with a second thread (--http-redis-threads),
// so Redis keeps its default of one.
constexpr int kDefaultClientThreads = 2;

struct HttpOptions {
  bool quick = false;
  std::string dir;
  bool keep = false;
  int connections = 50;
  int client_threads = kDefaultClientThreads;
  int redis_threads = 1;
  int io_threads = 2;
  int blocking_threads = 64;
  uint64_t payload_bytes = 100;
  uint64_t batch = 100;
  double warmup = 1.0;
  double seconds = 6.0;
  double batch_seconds = 5.0;
  uint64_t redis_requests = 200'000;
  uint64_t redis_pipelined_requests = 1'000'000;
  int pipeline = 16;
  std::vector<std::string> syncs = {"none", "always"};
  int rounds = 3;
  int slices = 4;
  std::string wrk = "auto";  // auto (when installed), on, off.
  std::string wrk_path;      // Found by RunAll; empty: no wrk rows.
  std::string script_dir;    // Where RunAll has wrk's script written.
};

template <typename T>
T Pick(const po::variables_map& vars, const char* name, bool quick, T quick_value) {
  if (quick && (vars.count(name) == 0 || vars[name].defaulted())) return quick_value;
  return vars[name].as<T>();
}

absl::StatusOr<HttpOptions> OptionsFrom(const po::variables_map& vars) {
  HttpOptions o;
  o.quick = vars.count("quick") > 0;
  const bool q = o.quick;
  if (vars.count("dir")) o.dir = vars["dir"].as<std::string>();
  o.keep = vars.count("keep") > 0;
  o.connections = vars["http-connections"].as<int>();
  o.client_threads = vars["http-client-threads"].as<int>();
  o.redis_threads = vars["http-redis-threads"].as<int>();
  o.io_threads = vars["http-io-threads"].as<int>();
  o.blocking_threads = vars["http-blocking-threads"].as<int>();
  o.payload_bytes = vars["http-payload-bytes"].as<uint64_t>();
  o.batch = vars["http-batch"].as<uint64_t>();
  o.warmup = Pick<double>(vars, "http-warmup", q, 0.3);
  o.seconds = Pick<double>(vars, "http-seconds", q, 1.0);
  o.batch_seconds = Pick<double>(vars, "http-batch-seconds", q, 1.0);
  o.redis_requests = Pick<uint64_t>(vars, "http-redis-requests", q, 5'000);
  o.redis_pipelined_requests = Pick<uint64_t>(vars, "http-redis-pipelined-requests", q, 20'000);
  o.pipeline = vars["http-redis-pipeline"].as<int>();
  o.rounds = Pick<int>(vars, "http-rounds", q, 1);
  o.slices = Pick<int>(vars, "http-slices", q, 2);  // Both orders, in the smoke test too.
  o.wrk = vars["http-wrk"].as<std::string>();
  if (o.wrk != "auto" && o.wrk != "on" && o.wrk != "off") {
    return absl::InvalidArgumentError(absl::StrCat("--http-wrk: '", o.wrk, "' is not auto, on or off"));
  }
  const std::string syncs = vars["http-syncs"].as<std::string>();
  o.syncs.clear();
  for (absl::string_view s : absl::StrSplit(syncs, ',', absl::SkipEmpty())) {
    if (s != "none" && s != "always") {
      return absl::InvalidArgumentError(
          absl::StrCat("--http-syncs: '", s, "' is not none or always"));
    }
    o.syncs.emplace_back(s);
  }
  if (o.syncs.empty()) return absl::InvalidArgumentError("--http-syncs names no mode");
  if (o.connections < 1 || o.client_threads < 1 || o.redis_threads < 1 || o.io_threads < 1 ||
      o.blocking_threads < 1 || o.batch < 1 || o.pipeline < 1 || o.redis_requests < 1 ||
      o.redis_pipelined_requests < 1 || o.rounds < 1 || o.slices < 1) {
    return absl::InvalidArgumentError("counts must be at least 1");
  }
  if (o.payload_bytes < 1 || o.payload_bytes > 100'000) {
    return absl::InvalidArgumentError("--http-payload-bytes must be 1..100000");
  }
  if (o.seconds <= 0 || o.batch_seconds <= 0 || o.warmup < 0) {
    return absl::InvalidArgumentError("durations must be positive");
  }
  return o;
}

// The AOF fsync policy Redis runs with against a Keel sync mode.
const char* AofFor(const std::string& sync) { return sync == "always" ? "always" : "everysec"; }

// A printable payload: the same bytes for Redis and Keel.
std::string Payload(size_t bytes) {
  static constexpr char kAlphabet[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::mt19937_64 rng(20261130);
  std::string out(bytes, 'x');
  for (char& c : out) c = kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
  return out;
}

std::string EventJson(const std::string& payload) {
  return absl::StrCat("{\"type\":\"bench.http\",\"data\":\"", payload, "\"}");
}

// ---------------------------------------------------------------- redis

// One case's counted part, summed over its slices: events, seconds, and the
// CPU time of the server and of its load client.
struct CaseTotals {
  double events = 0;
  double seconds = 0;
  double server_cpu = 0;
  double client_cpu = 0;

  void Add(const CaseTotals& slice) {
    events += slice.events;
    seconds += slice.seconds;
    server_cpu += slice.server_cpu;
    client_cpu += slice.client_cpu;
  }
  double Rate() const { return seconds > 0 ? events / seconds : 0; }
};

std::string ShellQuote(const std::string& arg) {
  if (!arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "0123456789-_./=:") == std::string::npos) {
    return arg;
  }
  return absl::StrCat("'", arg, "'");
}

// The payload (last argument of redis-benchmark) is abbreviated.
std::string CommandLine(const std::vector<std::string>& argv, const std::string& payload = "") {
  std::vector<std::string> parts;
  for (const std::string& arg : argv) {
    if (!payload.empty() && arg == payload) {
      parts.push_back(absl::StrCat("<", arg.size(), "-byte value>"));
    } else {
      parts.push_back(ShellQuote(arg));
    }
  }
  return absl::StrJoin(parts, " ");
}

// The figure of redis-benchmark -q: "...: 46082.95 requests per second, ...".
absl::StatusOr<double> ParseRequestsPerSecond(const std::string& output) {
  const size_t at = output.rfind(" requests per second");
  if (at == std::string::npos) {
    return absl::InternalError(absl::StrCat("no 'requests per second' in redis-benchmark output: ",
                                            output.substr(0, 500)));
  }
  size_t begin = at;
  while (begin > 0 && (std::isdigit(static_cast<unsigned char>(output[begin - 1])) ||
                       output[begin - 1] == '.')) {
    --begin;
  }
  double rate = 0;
  if (!absl::SimpleAtod(output.substr(begin, at - begin), &rate) || rate <= 0) {
    return absl::InternalError(absl::StrCat("cannot parse redis-benchmark rate '",
                                            output.substr(begin, at - begin), "'"));
  }
  return rate;
}

// CPU time per event of a server and its load client, as printed after a
// rate: steadier than the rate when the machine's speed moves.
std::string CpuPerEvent(double server_seconds, double client_seconds, double events) {
  if (events <= 0) return "";
  return absl::StrFormat("CPU per event: server %.1f us, client %.1f us",
                         server_seconds / events * 1e6, client_seconds / events * 1e6);
}

// A redis-server kept up for a round (--appendonly yes --appendfsync `aof`);
// each Run is one slice of redis-benchmark XADDs against it.
class RedisBaseline {
 public:
  RedisBaseline(const HttpOptions& o, std::string benchmark_path, std::string payload)
      : o_(o), benchmark_path_(std::move(benchmark_path)), payload_(std::move(payload)) {}

  absl::Status Start(const std::string& server_path, const std::string& aof,
                     const std::string& dir) {
    fs::create_directories(dir);
    KEEL_ASSIGN_OR_RETURN(port_, ::keel::testing::FreePort());
    const std::vector<std::string> argv = {
        server_path, "--port", absl::StrCat(port_), "--bind", "127.0.0.1", "--appendonly", "yes",
        "--appendfsync", aof, "--save", "", "--dir", dir, "--daemonize", "no"};
    server_command_ = CommandLine(argv);
    KEEL_ASSIGN_OR_RETURN(server_,
                          ChildProcess::Start(argv, (fs::path(dir) / "redis.log").string()));
    return WaitForListener(port_, absl::Seconds(10));
  }

  // `requests` XADDs from -c connections, -P `pipeline` when over 1.
  absl::StatusOr<CaseTotals> Run(uint64_t requests, int pipeline) {
    const std::vector<std::string> argv = Argv(requests, pipeline);
    const double server_cpu0 = ProcessCpuSeconds(server_.pid());
    const double client_cpu0 = ReapedChildrenCpuSeconds();
    KEEL_ASSIGN_OR_RETURN(RunOutput result, RunAndCapture(argv));
    if (result.exit_code != 0) {
      return absl::InternalError(absl::StrCat("redis-benchmark exited ", result.exit_code, ": ",
                                              result.output.substr(0, 500)));
    }
    KEEL_ASSIGN_OR_RETURN(const double rate, ParseRequestsPerSecond(result.output));
    CaseTotals slice;
    slice.events = static_cast<double>(requests);
    slice.seconds = slice.events / rate;
    slice.server_cpu = ProcessCpuSeconds(server_.pid()) - server_cpu0;
    slice.client_cpu = ReapedChildrenCpuSeconds() - client_cpu0;
    return slice;
  }

  // The command lines, for the report (the payload abbreviated).
  const std::string& server_command() const { return server_command_; }
  std::string BenchmarkCommand(uint64_t requests, int pipeline) const {
    return CommandLine(Argv(requests, pipeline), payload_);
  }

  void Stop() { server_.Stop(SIGTERM, absl::Seconds(10)); }

 private:
  std::vector<std::string> Argv(uint64_t requests, int pipeline) const {
    std::vector<std::string> argv = {benchmark_path_, "-p", absl::StrCat(port_), "-c",
                                     absl::StrCat(o_.connections), "-n", absl::StrCat(requests)};
    if (pipeline > 1) {
      argv.push_back("-P");
      argv.push_back(absl::StrCat(pipeline));
    }
    if (o_.redis_threads > 1) {
      argv.push_back("--threads");
      argv.push_back(absl::StrCat(o_.redis_threads));
    }
    for (const char* arg : {"-q", "XADD", "s", "*", "f"}) argv.push_back(arg);
    argv.push_back(payload_);
    return argv;
  }

  const HttpOptions& o_;
  const std::string benchmark_path_;
  const std::string payload_;
  uint16_t port_ = 0;
  ChildProcess server_;
  std::string server_command_;
};

// ---------------------------------------------------------------- keel

// The pieces of `keel daemon`, in this process.
class InProcessDaemon {
 public:
  absl::Status Start(const std::string& path, const std::string& sync, const HttpOptions& o) {
    DriverContext context;
    context.on_store_write = [this](absl::Duration d) { metrics_.store_write_latency().Observe(d); };
    Config config{{"store", "leveldb"}, {"store.path", path}, {"sync", sync}};
    KEEL_ASSIGN_OR_RETURN(bus_, CreateBus("durable", config, context));
    api_ = std::make_unique<server::Api>(*bus_, metrics_);
    server::ServerOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.io_threads = o.io_threads;
    options.blocking_threads = o.blocking_threads;
    options.inline_publishes = sync == "none";  // As `keel daemon` decides.
    server_ = std::make_unique<server::Server>(options, *api_, context.logger);
    return server_->Start();
  }
  uint16_t port() const { return server_->port(); }
  EventBus& bus() { return *bus_; }

  // The daemon's shutdown order.
  absl::Status Stop() {
    if (server_ == nullptr) return absl::OkStatus();
    api_->SetDraining();
    server_->StopAccepting();
    server_->DrainRequests(absl::Seconds(10));
    absl::Status closed = bus_->Close(absl::Seconds(10));
    server_->Stop(absl::Seconds(10));
    server_.reset();
    return closed;
  }
  ~InProcessDaemon() { Stop().IgnoreError(); }

 private:
  server::Metrics metrics_;
  std::unique_ptr<EventBus> bus_;
  std::unique_ptr<server::Api> api_;
  std::unique_ptr<server::Server> server_;
};

// A Keel slice: the load generator on `body` (`events` per request).
// `acknowledged` grows by the events answered 201 in the whole slice,
// warm-up included, for the check of the stream.
absl::StatusOr<CaseTotals> DriveKeelSlice(const HttpOptions& o, uint16_t port,
                                          const std::string& body, uint64_t events,
                                          double seconds, double warmup,
                                          uint64_t& acknowledged) {
  LoadOptions load;
  load.port = port;
  load.connections = o.connections;
  load.threads = o.client_threads;
  load.request = JsonPostRequest("127.0.0.1", absl::StrCat("/v1/streams/", kStream, "/events"), body);
  load.expected_status = 201;
  load.warmup_seconds = warmup;
  load.seconds = seconds;
  KEEL_ASSIGN_OR_RETURN(LoadResult result, RunHttpLoad(load));
  // A slice may count no answer (a short --quick window on a loaded
  // machine); a case that counts none fails in RunCase.
  if (result.bad > 0 || result.io_errors > 0) {
    return absl::InternalError(absl::StrCat(
        "publish load: ", result.bad, " non-201 responses, ", result.io_errors,
        " connection errors, ", result.good, " 201s counted; first: ", result.first_bad_response));
  }
  acknowledged += result.statuses[201] * events;
  CaseTotals slice;
  slice.events = static_cast<double>(result.good * events);
  slice.seconds = result.seconds;
  // The daemon's CPU: this process's minus the load threads'.
  slice.server_cpu = result.process_cpu_seconds - result.client_cpu_seconds;
  slice.client_cpu = result.client_cpu_seconds;
  return slice;
}

// One case's line: its rate, counted events and time, and CPU per event.
void ReportCase(const std::string& label, const CaseTotals& totals, std::ostream& out) {
  out << absl::StrFormat("  %-44s %s  (%s events in %s; %s)\n", label,
                         EventsPerSecond(totals.Rate()),
                         Thousands(static_cast<uint64_t>(totals.events)),
                         Duration(totals.seconds),
                         CpuPerEvent(totals.server_cpu, totals.client_cpu, totals.events))
      << std::flush;
}

// Later slices of a case need only let the load generator's new connections
// settle: the daemon is warm.
constexpr double kLaterSliceWarmup = 0.25;

// The work a slice left running (LevelDB's flushes and compactions, a
// forked AOF rewrite of Redis) counts for that slice's side, and is done
// before the other side's next slice starts (bench_process.h).
CaseTotals Settle(absl::Duration longest) {
  const MachineSettling settled = SettleMachine(longest);
  CaseTotals busy;
  busy.seconds = settled.seconds;
  busy.server_cpu = settled.cpu_seconds;
  return busy;
}

// Redis requests per slice of a case of `total`.
uint64_t SliceRequests(uint64_t total, int slices) {
  return std::max<uint64_t>(1, total / static_cast<uint64_t>(slices));
}

// One case of a round: Redis's XADDs (`pipeline` deep) against Keel's
// requests of `events` events each, and the lines that report them.
struct CaseSpec {
  uint64_t redis_requests = 0;
  int pipeline = 1;
  std::string body;
  uint64_t events = 1;
  double seconds = 0;  // Keel's counted time over all slices.
  std::string redis_label, keel_label, wrk_label;
};

// A case's rates, events/s (wrk: Keel driven by wrk; 0 without it).
struct CaseRates {
  double redis = 0, keel = 0, wrk = 0;
};

// A daemon and its baseline, kept up for a round; see RunRound.
class RoundServers {
 public:
  RoundServers(const HttpOptions& o, InProcessDaemon& daemon, RedisBaseline* redis)
      : o_(o),
        daemon_(daemon),
        redis_(redis),
        // A smoke run shares the machine with other tests: it is never quiet.
        settle_at_most_(o.quick ? absl::Seconds(1) : absl::Seconds(10)) {}

  // Runs `spec` in --http-slices slices, Redis first, then Keel first, ...,
  // each followed by settling charged to its side, and prints its lines.
  absl::StatusOr<CaseRates> RunCase(const CaseSpec& spec, std::ostream& out) {
    CaseTotals redis, keel, wrk;
    for (int slice = 0; slice < o_.slices; ++slice) {
      const bool redis_first = slice % 2 == 0;
      if (redis_first) KEEL_RETURN_IF_ERROR(RedisSlice(spec, redis));
      KEEL_RETURN_IF_ERROR(KeelSlice(spec, slice, keel));
      KEEL_RETURN_IF_ERROR(WrkSlice(spec, wrk));
      if (!redis_first) KEEL_RETURN_IF_ERROR(RedisSlice(spec, redis));
    }
    if (keel.events == 0) {
      return absl::InternalError("publish load: no 201 counted in any slice of the case");
    }
    if (redis_ != nullptr) ReportCase(spec.redis_label, redis, out);
    ReportCase(spec.keel_label, keel, out);
    if (!o_.wrk_path.empty()) ReportCase(spec.wrk_label, wrk, out);
    return CaseRates{redis.Rate(), keel.Rate(), wrk.Rate()};
  }

  // Events the daemon answered 201, warm-ups included.
  uint64_t acknowledged() const { return acknowledged_; }

 private:
  absl::Status RedisSlice(const CaseSpec& spec, CaseTotals& totals) {
    if (redis_ == nullptr) return absl::OkStatus();
    KEEL_ASSIGN_OR_RETURN(
        const CaseTotals part,
        redis_->Run(SliceRequests(spec.redis_requests, o_.slices), spec.pipeline));
    totals.Add(part);
    totals.Add(Settle(settle_at_most_));
    return absl::OkStatus();
  }

  absl::Status KeelSlice(const CaseSpec& spec, int slice, CaseTotals& totals) {
    const double warmup = slice == 0 ? o_.warmup : std::min(o_.warmup, kLaterSliceWarmup);
    KEEL_ASSIGN_OR_RETURN(const CaseTotals part,
                          DriveKeelSlice(o_, daemon_.port(), spec.body, spec.events,
                                         spec.seconds / o_.slices, warmup, acknowledged_));
    totals.Add(part);
    totals.Add(Settle(settle_at_most_));
    return absl::OkStatus();
  }

  // Keel driven by wrk. wrk leaves uncounted the requests in flight when
  // it stops, so the events acknowledged are what the stream gained.
  absl::Status WrkSlice(const CaseSpec& spec, CaseTotals& totals) {
    if (o_.wrk_path.empty()) return absl::OkStatus();
    KEEL_ASSIGN_OR_RETURN(const StreamInfo before, daemon_.bus().replayer()->Bounds(kStream));
    WrkOptions wrk{.wrk_path = o_.wrk_path,
                   .url = absl::StrCat("http://127.0.0.1:", daemon_.port(), "/v1/streams/",
                                       kStream, "/events"),
                   .body = spec.body,
                   .threads = o_.client_threads,
                   .connections = o_.connections,
                   .seconds = spec.seconds / o_.slices,
                   .script_dir = o_.script_dir};
    const double cpu_before = ProcessCpuSeconds(0);
    KEEL_ASSIGN_OR_RETURN(const WrkResult result, RunWrk(wrk));
    const double server_cpu = ProcessCpuSeconds(0) - cpu_before;
    if (result.bad_responses > 0 || result.socket_errors > 0) {
      return absl::InternalError(absl::StrCat("wrk: ", result.bad_responses, " non-2xx responses, ",
                                              result.socket_errors, " socket errors"));
    }
    CaseTotals slice;
    slice.events = static_cast<double>(result.requests * spec.events);
    slice.seconds = result.seconds;
    slice.server_cpu = server_cpu;
    slice.client_cpu = result.client_cpu_seconds;
    totals.Add(slice);
    totals.Add(Settle(settle_at_most_));
    KEEL_ASSIGN_OR_RETURN(const StreamInfo after, daemon_.bus().replayer()->Bounds(kStream));
    if (after.last_sequence < before.last_sequence + result.requests * spec.events) {
      return absl::InternalError(absl::StrCat("wrk counted ", result.requests * spec.events,
                                              " events answered, the stream gained ",
                                              after.last_sequence - before.last_sequence));
    }
    acknowledged_ += after.last_sequence - before.last_sequence;
    return absl::OkStatus();
  }

  const HttpOptions& o_;
  InProcessDaemon& daemon_;
  RedisBaseline* redis_;  // Null when missing.
  const absl::Duration settle_at_most_;
  uint64_t acknowledged_ = 0;
};

// The rates of one round, events/s.
struct RoundRates {
  CaseRates single, batch;
};

// One round of a pairing: `redis` (null when missing) and a Keel daemon
// kept up side by side, each case run in alternating slices so that both
// sides meet the machine at the same moments. The daemon's stream must hold
// exactly the events it acknowledged.
absl::StatusOr<RoundRates> RunRound(const HttpOptions& o, const std::string& sync,
                                    const std::string& keel_path, const std::string& payload,
                                    RedisBaseline* redis, std::ostream& out) {
  InProcessDaemon daemon;
  KEEL_RETURN_IF_ERROR(daemon.Start(keel_path, sync, o));
  RoundServers servers(o, daemon, redis);
  const std::string redis_label = absl::StrCat("redis XADD, AOF ", AofFor(sync), ", -c ",
                                               o.connections);
  const std::string event = EventJson(payload);
  RoundRates rates;
  KEEL_ASSIGN_OR_RETURN(
      rates.single,
      servers.RunCase({.redis_requests = o.redis_requests,
                       .pipeline = 1,
                       .body = event,
                       .events = 1,
                       .seconds = o.seconds,
                       .redis_label = redis_label,
                       .keel_label = absl::StrCat("keel sync=", sync, ", 1 event/request, ",
                                                  o.connections, " conn"),
                       .wrk_label = absl::StrCat("keel sync=", sync, ", 1 event/request, wrk -c",
                                                 o.connections)},
                      out));
  std::string batch_body = "[";
  for (uint64_t i = 0; i < o.batch; ++i) {
    if (i > 0) batch_body += ",";
    batch_body += event;
  }
  batch_body += "]";
  KEEL_ASSIGN_OR_RETURN(
      rates.batch,
      servers.RunCase({.redis_requests = o.redis_pipelined_requests,
                       .pipeline = o.pipeline,
                       .body = batch_body,
                       .events = o.batch,
                       .seconds = o.batch_seconds,
                       .redis_label = absl::StrCat(redis_label, " -P ", o.pipeline),
                       .keel_label = absl::StrCat("keel sync=", sync, ", ", o.batch,
                                                  " events/request, ", o.connections, " conn"),
                       .wrk_label = absl::StrCat("keel sync=", sync, ", ", o.batch,
                                                 " events/request, wrk -c", o.connections)},
                      out));
  KEEL_ASSIGN_OR_RETURN(StreamInfo info, daemon.bus().replayer()->Bounds(kStream));
  const uint64_t acknowledged = servers.acknowledged();
  if (info.count != acknowledged || info.last_sequence != acknowledged) {
    return absl::InternalError(absl::StrCat("the stream holds ", info.count,
                                            " events (last sequence ", info.last_sequence,
                                            ") but ", acknowledged, " were acknowledged"));
  }
  KEEL_RETURN_IF_ERROR(daemon.Stop());
  return rates;
}

// ---------------------------------------------------------------- the mode

// One case's rates over the rounds, Keel's and the baseline's of the same
// round side by side.
class PairedRates {
 public:
  void Add(double keel, std::optional<double> baseline) {
    keel_.push_back(keel);
    if (baseline) {
      baseline_.push_back(*baseline);
      ratios_.push_back(keel / *baseline);
    }
  }

  // Medians; the ratio is the median of the per-round ratios, not the ratio
  // of the medians.
  ResultRow Row(std::string label, const std::string& baseline_label, double target = 1.0) const {
    ResultRow r;
    r.label = std::move(label);
    r.figure = EventsPerSecond(Median(keel_));
    if (baseline_.empty()) {
      r.baseline = "redis: MISSING";
      return r;
    }
    r.baseline = absl::StrCat(baseline_label, ": ", EventsPerSecond(Median(baseline_)));
    r.ratio = Median(ratios_);
    r.ratio_suffix = "x";
    r.goal = ResultRow::Goal::kAtLeast;
    r.target = target;
    return r;
  }

 private:
  std::vector<double> keel_, baseline_, ratios_;
};

class HttpBench final : public BenchMode {
 public:
  absl::string_view name() const override { return "http"; }
  absl::string_view summary() const override {
    return "HTTP publish (1 and 100 events/request, 50 connections) vs redis XADD, same run";
  }
  void AddOptions(po::options_description& options) const override {
    // One option a line.
    // clang-format off
    options.add_options()
        ("http-connections", po::value<int>()->default_value(50),
         "keep-alive connections of the load generator and redis-benchmark -c")
        ("http-client-threads", po::value<int>()->default_value(kDefaultClientThreads),
         "threads of the load generator")
        ("http-redis-threads", po::value<int>()->default_value(1),
         "redis-benchmark --threads (1: its default, left off the command line)")
        ("http-io-threads", po::value<int>()->default_value(2), "the daemon's I/O threads")
        ("http-blocking-threads", po::value<int>()->default_value(64),
         "the daemon's blocking-pool threads")
        ("http-payload-bytes", po::value<uint64_t>()->default_value(100),
         "bytes of the data string (and of the redis field value)")
        ("http-batch", po::value<uint64_t>()->default_value(100), "events per batch request")
        ("http-warmup", po::value<double>()->default_value(1.0),
         "seconds of load before each counted window (--quick: 0.3)")
        ("http-seconds", po::value<double>()->default_value(6.0),
         "counted seconds of the 1-event case (--quick: 1)")
        ("http-batch-seconds", po::value<double>()->default_value(5.0),
         "counted seconds of the batch case (--quick: 1)")
        ("http-redis-requests", po::value<uint64_t>()->default_value(200'000),
         "redis-benchmark -n without pipelining (--quick: 5000)")
        ("http-redis-pipelined-requests", po::value<uint64_t>()->default_value(1'000'000),
         "redis-benchmark -n with -P (--quick: 20000)")
        ("http-redis-pipeline", po::value<int>()->default_value(16), "redis-benchmark -P")
        ("http-rounds", po::value<int>()->default_value(3),
         "rounds per sync mode, each on fresh servers; the table shows medians (--quick: 1)")
        ("http-slices", po::value<int>()->default_value(4),
         "slices each case of a round is cut into, alternating between Redis and Keel "
         "(an even count gives each the first turn as often; --quick: 2)")
        ("http-wrk", po::value<std::string>()->default_value("auto"),
         "also drive keel with wrk: auto (when wrk is on PATH), on, off")
        ("http-syncs", po::value<std::string>()->default_value("none,always"),
         "keel sync modes to run (none pairs with AOF everysec, always with AOF always)");
    // clang-format on
    // Shared with other modes (bench_command.cc registers each name once).
    options.add_options()
        ("quick", "a small smoke run for CI; figures are not meaningful")
        ("dir", po::value<std::string>(),
         "parent directory for the stores (default: the system temp dir)")
        ("keep", "keep the stores instead of removing them");
  }

  int Run(const po::variables_map& vars, BenchIo& io) const override {
    absl::StatusOr<HttpOptions> options = OptionsFrom(vars);
    if (!options.ok()) {
      io.err << "keel-bench http: " << options.status().message() << "\n";
      return kExitUsage;
    }
    bool baseline_missing = false;
    absl::Status status = RunAll(*options, io.out, baseline_missing);
    if (!status.ok()) {
      io.err << "keel-bench http: " << status << "\n";
      return kExitFailure;
    }
    if (baseline_missing) {
      io.err << "keel-bench http: the Redis baseline is missing (redis-server and "
                "redis-benchmark must be on PATH); exit "
             << kExitBaselineMissing << "\n";
      return kExitBaselineMissing;
    }
    return kExitOk;
  }

 private:
  absl::Status RunAll(HttpOptions o, std::ostream& out, bool& baseline_missing) const;
};

absl::Status HttpBench::RunAll(HttpOptions o, std::ostream& out, bool& baseline_missing) const {
  absl::StatusOr<std::unique_ptr<ScratchDir>> scratch =
      ScratchDir::Create(o.dir, "keel-bench-http", o.keep);
  if (!scratch.ok()) return scratch.status();
  const std::string root = (*scratch)->path();
  o.script_dir = root;
  if (o.wrk != "off") o.wrk_path = FindProgram("wrk");
  if (o.wrk == "on" && o.wrk_path.empty()) {
    return absl::FailedPreconditionError("--http-wrk=on but wrk is not on PATH");
  }

  const std::string redis_server = FindProgram("redis-server");
  const std::string redis_benchmark = FindProgram("redis-benchmark");
  baseline_missing = redis_server.empty() || redis_benchmark.empty();
  std::string redis_version;
  if (!baseline_missing) {
    absl::StatusOr<RunOutput> version = RunAndCapture({redis_server, "--version"});
    if (version.ok()) redis_version = std::string(absl::StripTrailingAsciiWhitespace(version->output));
  }
  const std::string payload = Payload(o.payload_bytes);

  out << "keel-bench http" << (o.quick ? " --quick (smoke run: figures are not meaningful)" : "")
      << "\n"
      << "  keel: in-process daemon (durable driver, LevelDB under " << root << "), "
      << o.io_threads << " I/O + " << o.blocking_threads << " blocking threads; load generator "
      << o.connections << " keep-alive connections on " << o.client_threads
      << " client thread(s), one request in flight each; redis-benchmark on " << o.redis_threads
      << " thread(s)\n"
      << "  body: {\"type\":\"bench.http\",\"data\":\"<" << o.payload_bytes
      << " chars>\"} per event; batch = JSON array of " << o.batch << "\n"
      << "  baseline: "
      << (baseline_missing ? std::string("MISSING (redis-server / redis-benchmark not on PATH)")
                           : redis_version)
      << "\n  third-party load: "
      << (o.wrk_path.empty() ? std::string("none (wrk not on PATH or --http-wrk=off)")
                             : absl::StrCat("wrk -t", o.client_threads, " -c", o.connections,
                                            ", POST of the same bodies"))
      << "\n  machine: " << std::thread::hardware_concurrency()
      << " CPUs, shared by the server, the clients and redis\n";

  ResultTable table;
  std::vector<std::string> commands;
  for (const std::string& sync : o.syncs) {
    const std::string aof = AofFor(sync);
    out << "\n[sync=" << sync << " vs AOF " << aof << "]\n" << std::flush;
    PairedRates single, batch, wrk_single, wrk_batch;
    for (int round = 1; round <= o.rounds; ++round) {
      std::string suffix;
      if (o.rounds > 1) {
        out << " round " << round << "/" << o.rounds << "\n" << std::flush;
        suffix = absl::StrCat("-", round);
      }
      const std::string dir = (fs::path(root) / absl::StrCat("sync-", sync, suffix)).string();
      std::optional<RedisBaseline> redis;
      if (!baseline_missing) {
        redis.emplace(o, redis_benchmark, payload);
        KEEL_RETURN_IF_ERROR(redis->Start(redis_server, aof, dir + "/redis"));
        if (round == 1) {
          commands.push_back(redis->server_command());
          commands.push_back(
              redis->BenchmarkCommand(SliceRequests(o.redis_requests, o.slices), 1));
          commands.push_back(redis->BenchmarkCommand(
              SliceRequests(o.redis_pipelined_requests, o.slices), o.pipeline));
        }
      }
      absl::StatusOr<RoundRates> rates =
          RunRound(o, sync, dir + "/keel", payload, redis ? &*redis : nullptr, out);
      if (redis) redis->Stop();
      if (!rates.ok()) return rates.status();
      std::optional<double> redis_single, redis_pipelined;
      if (redis) {
        redis_single = rates->single.redis;
        redis_pipelined = rates->batch.redis;
      }
      single.Add(rates->single.keel, redis_single);
      batch.Add(rates->batch.keel, redis_pipelined);
      wrk_single.Add(rates->single.wrk, redis_single);
      wrk_batch.Add(rates->batch.wrk, redis_pipelined);
    }
    table.Add(single.Row(absl::StrCat("publish sync=", sync, ", 1 ev/req, c=", o.connections),
                         absl::StrCat("XADD AOF ", aof, " c=", o.connections)));
    table.Add(batch.Row(
        absl::StrCat("publish sync=", sync, ", ", o.batch, " ev/req, c=", o.connections),
        absl::StrCat("XADD AOF ", aof, " c=", o.connections, " P=", o.pipeline)));
    if (o.wrk_path.empty()) continue;
    // By a third-party client against Redis's own: the headline figure of
    // single-event publishes (a 10% lead, where Keel's client costs less
    // CPU than redis-benchmark).
    table.Add(wrk_single.Row(
        absl::StrCat("publish sync=", sync, ", 1 ev/req, wrk -c", o.connections),
        absl::StrCat("XADD AOF ", aof, " c=", o.connections), sync == "none" ? 1.1 : 1.0));
    table.Add(wrk_batch.Row(
        absl::StrCat("publish sync=", sync, ", ", o.batch, " ev/req, wrk -c", o.connections),
        absl::StrCat("XADD AOF ", aof, " c=", o.connections, " P=", o.pipeline)));
  }

  out << "\n" << std::flush;
  const int misses = table.Print(out);
  out << "\nrates are events/s (redis: XADD requests/s; one XADD = one event); ratio = keel / "
         "redis. "
      << (baseline_missing ? std::string("Baseline missing: no targets checked.")
          : misses == 0    ? std::string("All targets met.")
                           : absl::StrCat(misses, " target(s) missed."))
      << " Targets are printed, not asserted.\n";
  if (o.rounds > 1) {
    out << "each figure is the median of " << o.rounds
        << " rounds, and each ratio the median of the per-round ratios.\n";
  }
  if (!commands.empty()) {
    out << "redis commands:\n";
    for (const std::string& c : commands) out << "  " << c << "\n";
  }
  return absl::OkStatus();
}

}  // namespace

std::unique_ptr<BenchMode> NewHttpBench() { return std::make_unique<HttpBench>(); }

}  // namespace keel::bench
