// `keel-bench jetstream`: the jetstream driver against a plain nats.c
// JetStream publisher on the same server, in the same run (issue 25). It
// starts its own nats-server processes (NatsCluster) and stops them.
//
//   1. standalone: one `nats-server` with JetStream. The driver, opened
//      through the registry (`CreateBus("jetstream")`), publishes single
//      events with EventBus::Publish from 64 threads and PublishBatch(100)
//      from 4 threads; the baseline (RawJetStream) publishes the same events,
//      one message each, with js_PublishAsync over one connection. The
//      sides alternate in rounds on fresh JetStream streams; each ratio is
//      the median of the per-round ratios. Target: >= 0.8 of the raw rate.
//      For scale, the raw client also runs held to as many unacknowledged
//      messages as there are single-event publishers (one each).
//   2. cluster: the same on a 3-node cluster, every stream at 3 replicas.
//   3. durable: the durable driver over LevelDB (sync=none and sync=always)
//      publishing the same events the same ways, beside them (no target).
//   4. fan-out: two `keel daemon --driver jetstream` on one bus, SSE
//      connections split between them, events published through the first;
//      p50/p99 latency at the readers of each (JetStreamFanout).
//
// Every receipt is checked: each stream must get exactly the sequences
// 1..n, a batch consecutive ones, and JetStream must hold every raw
// message. A wrong result is an error (exit 1); a missed target is printed.
#include <nats/nats.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <latch>
#include <map>
#include <ostream>
#include <random>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "keel/cmd/keel-bench/bench_mode.h"
#include "keel/cmd/keel-bench/bench_process.h"
#include "keel/cmd/keel-bench/bench_report.h"
#include "keel/cmd/keel-bench/jetstream_fanout.h"
#include "keel/cmd/keel-bench/raw_jetstream.h"
#include "keel/core/driver_factory.h"
#include "keel/core/event_codec.h"
#include "keel/core/mutex.h"
#include "keel/core/publish_validation.h"
#include "keel/core/status_macros.h"
#include "keel/tests/nats/nats_cluster.h"

namespace keel::bench {
namespace {

namespace fs = std::filesystem;
using jetstream::testing::NatsCluster;

constexpr double kTarget = 0.8;

// ---------------------------------------------------------------- options

struct JetStreamBenchOptions {
  std::string keel;  // For the fan-out's daemons.
  bool quick = false;
  std::string dir;
  bool keep = false;
  uint64_t seed = 20261205;
  uint64_t events = 20'000;         // Single-event publishes per round.
  uint64_t batch_events = 100'000;  // Events per round in batches (and raw).
  uint64_t payload_bytes = 256;
  uint64_t streams = 64;
  uint64_t publishers = 64;
  uint64_t batch_publishers = 4;
  uint64_t batch = 100;
  int64_t max_pending = 4000;
  int rounds = 3;
  std::set<std::string> cases;
  JetStreamFanoutOptions fanout;
};

template <typename T>
T Pick(const po::variables_map& vars, const char* name, bool quick, T quick_value) {
  if (quick && (vars.count(name) == 0 || vars[name].defaulted())) return quick_value;
  return vars[name].as<T>();
}

absl::StatusOr<JetStreamBenchOptions> OptionsFrom(const po::variables_map& vars) {
  JetStreamBenchOptions o;
  o.quick = vars.count("quick") > 0;
  const bool q = o.quick;
  if (vars.count("dir")) o.dir = vars["dir"].as<std::string>();
  o.keep = vars.count("keep") > 0;
  o.seed = vars["seed"].as<uint64_t>();
  o.events = Pick<uint64_t>(vars, "events", q, 300);
  o.batch_events = Pick<uint64_t>(vars, "batch-events", q, 2'000);
  o.payload_bytes = vars["payload-bytes"].as<uint64_t>();
  o.streams = vars["streams"].as<uint64_t>();
  o.publishers = vars["publishers"].as<uint64_t>();
  o.batch_publishers = vars["batch-publishers"].as<uint64_t>();
  o.batch = vars["batch"].as<uint64_t>();
  o.max_pending = vars["raw-max-pending"].as<int64_t>();
  o.rounds = Pick<int>(vars, "rounds", q, 1);
  for (absl::string_view c :
       absl::StrSplit(vars["cases"].as<std::string>(), ',', absl::SkipEmpty())) {
    if (c != "standalone" && c != "cluster" && c != "durable" && c != "fanout") {
      return absl::InvalidArgumentError(
          absl::StrCat("--cases: unknown case '", c, "' (standalone, cluster, durable, fanout)"));
    }
    o.cases.insert(std::string(c));
  }
  if (o.events == 0 || o.batch_events == 0 || o.streams == 0 || o.publishers == 0 ||
      o.batch_publishers == 0 || o.batch == 0 || o.rounds < 1 || o.max_pending < 1) {
    return absl::InvalidArgumentError("counts must be at least 1");
  }
  if (o.batch_events % o.batch != 0) {
    return absl::InvalidArgumentError("--batch-events must be a multiple of --batch");
  }
  if (o.payload_bytes > 100'000) {
    return absl::InvalidArgumentError("payloads are limited to 100000 bytes");
  }
  JetStreamFanoutOptions& f = o.fanout;
  f.connections = Pick<int>(vars, "sse-connections", q, 100);
  f.client_threads = vars["sse-client-threads"].as<int>();
  f.rate = vars["sse-rate"].as<double>();
  f.seconds = Pick<double>(vars, "sse-seconds", q, 3.0);
  f.publishers = vars["sse-publishers"].as<int>();
  f.payload_bytes = vars["sse-payload-bytes"].as<uint64_t>();
  f.drain_timeout = vars["sse-drain-timeout"].as<double>();
  if (f.connections < 2 || f.client_threads < 1 || f.publishers < 1 || f.rate <= 0 ||
      f.seconds <= 0 || f.payload_bytes > 10'000) {
    return absl::InvalidArgumentError(
        "--sse-connections must be at least 2; SSE counts and durations must be positive");
  }
  if (o.cases.count("fanout")) {
    if (vars.count("keel")) {
      o.keel = FindProgram(vars["keel"].as<std::string>());
      if (o.keel.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("--keel: '", vars["keel"].as<std::string>(),
                                                       "' is not an executable program"));
      }
    } else {
      o.keel = KeelProgramBeside(SelfExecutable());
      if (o.keel.empty()) {
        return absl::InvalidArgumentError(
            "cannot find the keel binary (next to keel-bench, in the build tree's cmd/keel/ or "
            "on PATH); name it with --keel");
      }
    }
    f.keel = o.keel;
  }
  return o;
}

// ---------------------------------------------------------------- events

// The generated events: random payloads, ids set, streams set per workload.
// `bodies` holds each event as the driver stores it in a record (its
// envelope without stream and sequence), which the raw publisher sends as
// the message data.
struct EventSet {
  std::vector<std::string> streams;
  std::vector<Event> events;
  std::vector<std::string> bodies;
};

EventSet GenerateEvents(const JetStreamBenchOptions& o) {
  EventSet set;
  for (uint64_t s = 0; s < o.streams; ++s) {
    set.streams.push_back(absl::StrFormat("bench-%03d", static_cast<int>(s)));
  }
  const uint64_t count = std::max(o.events, o.batch_events);
  const absl::Time now = absl::Now();
  std::mt19937_64 rng(o.seed);
  set.events.resize(count);
  set.bodies.resize(count);
  for (size_t i = 0; i < count; ++i) {
    Event& e = set.events[i];
    e.type = "bench.jetstream";
    e.content_type = "application/octet-stream";
    e.id = NewEventId(now);
    e.payload.resize(o.payload_bytes);
    for (size_t b = 0; b < o.payload_bytes; b += 8) {
      const uint64_t r = rng();
      for (size_t j = 0; j < 8 && b + j < o.payload_bytes; ++j) {
        e.payload[b + j] = static_cast<char>(r >> (8 * j));
      }
    }
    e.time = now;
    AppendEncodedEventBody(e, set.bodies[i]);
    e.time = absl::InfinitePast();  // The bus assigns it.
  }
  return set;
}

// How events are published: `batch` 1 is EventBus::Publish of event i to
// stream i % streams; otherwise PublishBatch of events [k*batch, (k+1)*batch)
// to stream k % streams. Threads take the next event or batch from a shared
// counter, so every thread publishes to many streams and streams are
// written by several threads at once.
struct Workload {
  uint64_t events = 0;
  uint64_t batch = 1;
  uint64_t publishers = 1;

  std::string Describe() const {
    return batch == 1 ? absl::StrCat("Publish, ", publishers, " publishers")
                      : absl::StrCat("PublishBatch(", batch, "), ", publishers, " publishers");
  }
};

// Checks that each stream's receipts are exactly the sequences 1..n.
absl::Status CheckSequences(std::vector<std::vector<uint64_t>>& by_stream, const EventSet& set) {
  for (size_t s = 0; s < by_stream.size(); ++s) {
    std::vector<uint64_t>& got = by_stream[s];
    std::sort(got.begin(), got.end());
    for (size_t k = 0; k < got.size(); ++k) {
      if (got[k] != k + 1) {
        return absl::InternalError(
            absl::StrCat("stream ", set.streams[s], ": receipts do not hold sequences 1..",
                         got.size(), " exactly (sequence ", got[k], " where ", k + 1, " belongs)"));
      }
    }
  }
  return absl::OkStatus();
}

// Publishes `w` on `bus`, checks every receipt; returns events per second
// from the release of the threads to the last receipt.
absl::StatusOr<double> PublishThroughBus(EventBus& bus, const EventSet& set, const Workload& w) {
  const size_t streams = set.streams.size();
  // Copied before the clock starts; moved into the bus.
  std::vector<Event> events(set.events.begin(), set.events.begin() + w.events);
  for (size_t i = 0; i < events.size(); ++i) {
    events[i].stream = set.streams[(w.batch == 1 ? i : i / w.batch) % streams];
  }
  const uint64_t units = w.batch == 1 ? w.events : w.events / w.batch;
  std::atomic<uint64_t> next{0};
  keel::Mutex mu;
  absl::Status first_error;
  std::vector<std::vector<uint64_t>> by_stream(streams);
  std::latch ready(static_cast<std::ptrdiff_t>(w.publishers) + 1);
  std::vector<std::thread> threads;
  for (uint64_t p = 0; p < w.publishers; ++p) {
    threads.emplace_back([&] {
      std::vector<std::pair<size_t, uint64_t>> seen;  // (stream, sequence)
      absl::Status status;
      ready.arrive_and_wait();
      for (uint64_t unit = next.fetch_add(1); status.ok() && unit < units;
           unit = next.fetch_add(1)) {
        const size_t stream = unit % streams;
        if (w.batch == 1) {
          absl::StatusOr<Receipt> receipt = bus.Publish(std::move(events[unit]));
          status = receipt.status();
          if (status.ok()) seen.emplace_back(stream, receipt->sequence);
          continue;
        }
        std::vector<Event> batch(std::make_move_iterator(events.begin() + unit * w.batch),
                                 std::make_move_iterator(events.begin() + (unit + 1) * w.batch));
        absl::StatusOr<std::vector<Receipt>> receipts =
            bus.PublishBatch(set.streams[stream], std::move(batch));
        status = receipts.status();
        if (status.ok() && receipts->size() != w.batch) {
          status = absl::InternalError(
              absl::StrCat("a batch of ", w.batch, " got ", receipts->size(), " receipts"));
        }
        for (size_t k = 0; status.ok() && k < receipts->size(); ++k) {
          if ((*receipts)[k].sequence != (*receipts)[0].sequence + k) {
            status = absl::InternalError("a batch got sequences that do not follow each other");
          }
          seen.emplace_back(stream, (*receipts)[k].sequence);
        }
      }
      keel::MutexLock lock(&mu);
      first_error.Update(status);
      for (const auto& [stream, sequence] : seen) by_stream[stream].push_back(sequence);
    });
  }
  ready.arrive_and_wait();
  Stopwatch watch;
  for (std::thread& t : threads) t.join();
  const double seconds = watch.Seconds();
  KEEL_RETURN_IF_ERROR(first_error);
  KEEL_RETURN_IF_ERROR(CheckSequences(by_stream, set));
  return static_cast<double>(w.events) / seconds;
}

// ---------------------------------------------------------------- sides

// Figures of one labelled row over the rounds.
struct Series {
  std::vector<double> rates;
  std::vector<double> ratios;  // To the raw rate of the same round.
};

// A JetStream server (standalone or cluster) and its rounds.
class JetStreamSides {
 public:
  JetStreamSides(const JetStreamBenchOptions& o, const EventSet& set, NatsCluster& servers,
                 RawJetStream& raw, std::ostream& out)
      : o_(o), set_(set), servers_(servers), raw_(raw), out_(out) {}

  int replicas() const { return servers_.size() == 1 ? 1 : 3; }

  // The raw baseline: `o.batch_events` events, one message each, to
  // subjects <prefix>.<stream> of a fresh stream, by `raw` (the baseline's
  // client unless given). Returns events/s.
  absl::StatusOr<double> Raw(int round, RawJetStream* client = nullptr) {
    RawJetStream& publisher = client != nullptr ? *client : raw_;
    const std::string name = absl::StrCat("KEEL_BENCH_RAW_", round);
    const std::string prefix = absl::StrCat("bench.raw", round);
    KEEL_RETURN_IF_ERROR(publisher.CreateStream(name, prefix + ".>", replicas()));
    std::vector<std::string> subjects(o_.batch_events);
    for (size_t i = 0; i < subjects.size(); ++i) {
      subjects[i] = absl::StrCat(prefix, ".", set_.streams[i % set_.streams.size()]);
    }
    const std::vector<std::string> data(set_.bodies.begin(), set_.bodies.begin() + o_.batch_events);
    absl::StatusOr<double> seconds = publisher.PublishAll(subjects, data);
    absl::StatusOr<uint64_t> stored =
        seconds.ok() ? publisher.StreamMessages(name) : absl::StatusOr<uint64_t>(0);
    absl::Status deleted = publisher.DeleteStream(name);
    KEEL_RETURN_IF_ERROR(seconds.status());
    KEEL_RETURN_IF_ERROR(stored.status());
    KEEL_RETURN_IF_ERROR(deleted);
    if (*stored != o_.batch_events) {
      return absl::InternalError(absl::StrCat("the raw stream holds ", *stored, " of ",
                                              o_.batch_events, " acknowledged messages"));
    }
    return static_cast<double>(o_.batch_events) / *seconds;
  }

  // The driver on a fresh bus (its own JetStream stream). Returns events/s.
  absl::StatusOr<double> Driver(int round, const Workload& w) {
    const std::string bus_name = absl::StrCat("bench", round, w.batch == 1 ? "s" : "b");
    Config config{
        {"servers", servers_.servers()}, {"bus", bus_name}, {"replicas", absl::StrCat(replicas())}};
    KEEL_ASSIGN_OR_RETURN(std::unique_ptr<EventBus> bus, CreateBus("jetstream", config));
    absl::StatusOr<double> rate = PublishThroughBus(*bus, set_, w);
    absl::Status closed = bus->Close();
    absl::Status deleted = raw_.DeleteStream(absl::StrCat("KEEL_", bus_name));
    KEEL_RETURN_IF_ERROR(rate.status());
    KEEL_RETURN_IF_ERROR(closed);
    KEEL_RETURN_IF_ERROR(deleted);
    return *rate;
  }

 private:
  const JetStreamBenchOptions& o_;
  const EventSet& set_;
  NatsCluster& servers_;
  RawJetStream& raw_;
  std::ostream& out_;
};

// The durable driver over LevelDB in a fresh directory. Returns events/s.
absl::StatusOr<double> Durable(const std::string& root, absl::string_view sync, const EventSet& set,
                               const Workload& w) {
  const std::string path = (fs::path(root) / absl::StrCat("durable-", sync)).string();
  std::error_code ignored;
  fs::remove_all(path, ignored);
  KEEL_ASSIGN_OR_RETURN(
      std::unique_ptr<EventBus> bus,
      CreateBus("durable",
                Config{{"store", "leveldb"}, {"store.path", path}, {"sync", std::string(sync)}}));
  absl::StatusOr<double> rate = PublishThroughBus(*bus, set, w);
  absl::Status closed = bus->Close();
  fs::remove_all(path, ignored);
  KEEL_RETURN_IF_ERROR(rate.status());
  KEEL_RETURN_IF_ERROR(closed);
  return *rate;
}

// ---------------------------------------------------------------- the mode

class JetStreamBench final : public BenchMode {
 public:
  absl::string_view name() const override { return "jetstream"; }
  absl::string_view summary() const override {
    return "the jetstream driver vs a raw nats.c async publisher (standalone, 3-node cluster), "
           "durable beside; SSE fan-out over 2 daemons";
  }
  void AddOptions(po::options_description& options) const override {
    options.add_options()("events", po::value<uint64_t>()->default_value(20'000),
                          "single-event publishes per round (--quick: 300)")(
        "batch-events", po::value<uint64_t>()->default_value(100'000),
        "events per round published in batches, and by the raw publisher (--quick: 2000)")(
        "payload-bytes", po::value<uint64_t>()->default_value(256), "random payload per event")(
        "streams", po::value<uint64_t>()->default_value(64), "Keel streams the events go to")(
        "publishers", po::value<uint64_t>()->default_value(64), "threads publishing single events")(
        "batch-publishers", po::value<uint64_t>()->default_value(4), "threads publishing batches")(
        "batch", po::value<uint64_t>()->default_value(100), "events per PublishBatch")(
        "raw-max-pending", po::value<int64_t>()->default_value(4000),
        "unacknowledged js_PublishAsync messages the raw publisher allows")(
        "rounds", po::value<int>()->default_value(3),
        "alternating rounds of each comparison (--quick: 1)")(
        "cases", po::value<std::string>()->default_value("standalone,cluster,durable,fanout"),
        "cases to run: standalone, cluster, durable (runs in the standalone server's rounds), "
        "fanout")("sse-connections", po::value<int>()->default_value(10'000),
                  "SSE connections of the fan-out, split between the two daemons (--quick: 100)")(
        "sse-client-threads", po::value<int>()->default_value(2),
        "reader threads of the SSE clients, split between the daemons")(
        "sse-rate", po::value<double>()->default_value(100), "fan-out publishes per second")(
        "sse-seconds", po::value<double>()->default_value(20),
        "fan-out publishing time (--quick: 3)")(
        "sse-publishers", po::value<int>()->default_value(16),
        "publisher connections sharing the open-loop schedule")(
        "sse-payload-bytes", po::value<uint64_t>()->default_value(100),
        "padding string in each fan-out event's data")(
        "sse-drain-timeout", po::value<double>()->default_value(30),
        "seconds without progress after which missing deliveries count as lost")(
        "seed", po::value<uint64_t>()->default_value(20261205), "seed of the random payloads")(
        "keel", po::value<std::string>(),
        "the keel binary to run as the fan-out's daemons (default: the keel of the same build)")
        // The generic flags every mode has (bench_mode.h).
        ("quick", "a small smoke run for CI; figures are not meaningful")(
            "dir", po::value<std::string>(),
            "parent directory for the servers' stores (default: the system temp dir)")(
            "keep", "keep the stores instead of removing them");
  }

  int Run(const po::variables_map& vars, BenchIo& io) const override {
    absl::StatusOr<JetStreamBenchOptions> options = OptionsFrom(vars);
    if (!options.ok()) {
      io.err << "keel-bench jetstream: " << options.status().message() << "\n";
      return kExitUsage;
    }
    absl::Status status = RunAll(*options, io.out);
    if (!status.ok()) {
      io.err << "keel-bench jetstream: " << status << "\n";
      return kExitFailure;
    }
    return kExitOk;
  }

 private:
  absl::Status RunAll(JetStreamBenchOptions o, std::ostream& out) const;
  absl::Status RunServer(const JetStreamBenchOptions& o, const EventSet& set, int nodes,
                         const std::string& root, ResultTable& table, std::ostream& out) const;
  absl::Status RunFanout(const JetStreamBenchOptions& o, const std::string& root,
                         ResultTable& table, std::ostream& out) const;
};

std::string Load() {
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) != 3) return "unknown";
  return absl::StrFormat("%.2f %.2f %.2f", load[0], load[1], load[2]);
}

// Runs the rounds on `nodes` servers (and, on the standalone server, the
// durable driver beside them) and adds their rows.
absl::Status JetStreamBench::RunServer(const JetStreamBenchOptions& o, const EventSet& set,
                                       int nodes, const std::string& root, ResultTable& table,
                                       std::ostream& out) const {
  const std::string where = nodes == 1 ? "standalone" : absl::StrCat(nodes, "-node cluster, R3");
  KEEL_ASSIGN_OR_RETURN(std::unique_ptr<NatsCluster> servers,
                        NatsCluster::Start(nodes, (fs::path(root) / where).string()));
  out << "\n[" << where << "] nats-server at " << servers->servers() << "\n" << std::flush;
  KEEL_ASSIGN_OR_RETURN(std::unique_ptr<RawJetStream> raw,
                        RawJetStream::Connect(servers->servers(), o.max_pending));
  // The raw client held to as many unacknowledged messages as the single
  // publishers can have (one each): what one message per event costs at
  // that depth, for scale.
  KEEL_ASSIGN_OR_RETURN(std::unique_ptr<RawJetStream> raw_window,
                        RawJetStream::Connect(servers->servers(), o.publishers));
  JetStreamSides sides(o, set, *servers, *raw, out);
  const Workload single{o.events, 1, o.publishers};
  const Workload batched{o.batch_events, o.batch, o.batch_publishers};
  const bool durable = nodes == 1 && o.cases.count("durable") > 0;

  std::vector<double> raw_rates;
  std::map<std::string, Series> series;
  std::vector<std::string> order;
  auto record = [&](const std::string& label, double rate) {
    if (!series.count(label)) order.push_back(label);
    series[label].rates.push_back(rate);
  };
  for (int round = 1; round <= o.rounds; ++round) {
    out << "  round " << round << " (load " << Load() << "):" << std::flush;
    // The raw side goes first in odd rounds and last in even ones.
    std::vector<std::pair<std::string, double>> rates;
    double raw_rate = 0;
    auto run_raw = [&]() -> absl::Status {
      KEEL_ASSIGN_OR_RETURN(raw_rate, sides.Raw(round));
      out << " raw " << EventsPerSecond(raw_rate) << ";" << std::flush;
      return absl::OkStatus();
    };
    if (round % 2 == 1) KEEL_RETURN_IF_ERROR(run_raw());
    for (const Workload& w : {single, batched}) {
      KEEL_ASSIGN_OR_RETURN(const double rate, sides.Driver(round, w));
      out << " " << (w.batch == 1 ? "single" : "batch") << " " << EventsPerSecond(rate) << ";"
          << std::flush;
      rates.emplace_back(absl::StrCat("jetstream ", w.Describe()), rate);
    }
    KEEL_ASSIGN_OR_RETURN(const double window_rate, sides.Raw(round, raw_window.get()));
    out << " raw at most " << o.publishers << " pending " << EventsPerSecond(window_rate) << ";"
        << std::flush;
    rates.emplace_back(
        absl::StrCat("raw nats.c js_PublishAsync, at most ", o.publishers, " pending"),
        window_rate);
    if (round % 2 == 0) KEEL_RETURN_IF_ERROR(run_raw());
    if (durable) {
      for (absl::string_view sync : {"none", "always"}) {
        for (const Workload& w : {single, batched}) {
          KEEL_ASSIGN_OR_RETURN(const double rate, Durable(root, sync, set, w));
          out << " durable " << sync << " " << (w.batch == 1 ? "single" : "batch") << " "
              << EventsPerSecond(rate) << ";" << std::flush;
          rates.emplace_back(absl::StrCat("durable sync=", sync, " ", w.Describe()), rate);
        }
      }
    }
    out << "\n" << std::flush;
    raw_rates.push_back(raw_rate);
    for (const auto& [label, rate] : rates) {
      record(label, rate);
      series[label].ratios.push_back(rate / raw_rate);
    }
  }
  const std::string raw_label =
      absl::StrCat("raw nats.c js_PublishAsync, 1 connection, max ", o.max_pending, " pending");
  const std::string raw_figure = EventsPerSecond(Median(raw_rates));
  table.Add(ResultRow{absl::StrCat(where, ": ", raw_label), raw_figure, "-", 0, "",
                      ResultRow::Goal::kNone, 0});
  for (const std::string& label : order) {
    const Series& s = series[label];
    const bool jetstream = label.rfind("jetstream", 0) == 0;
    table.Add(ResultRow{absl::StrCat(where, ": ", label), EventsPerSecond(Median(s.rates)),
                        raw_figure, Median(s.ratios), "",
                        jetstream ? ResultRow::Goal::kAtLeast : ResultRow::Goal::kNone,
                        jetstream ? kTarget : 0});
  }
  return absl::OkStatus();
}

absl::Status JetStreamBench::RunFanout(const JetStreamBenchOptions& o, const std::string& root,
                                       ResultTable& table, std::ostream& out) const {
  KEEL_ASSIGN_OR_RETURN(std::unique_ptr<NatsCluster> servers,
                        NatsCluster::Start(1, (fs::path(root) / "fanout").string()));
  JetStreamFanoutOptions f = o.fanout;
  f.servers = servers->servers();
  f.dir = root;
  out << "\n[fan-out] two keel daemons on one bus (nats-server at " << f.servers << "), "
      << Thousands(f.connections) << " SSE connections, " << f.rate << " events/s for " << f.seconds
      << " s (load " << Load() << ")\n"
      << std::flush;
  KEEL_ASSIGN_OR_RETURN(JetStreamFanoutResult r, RunJetStreamFanout(f, out));
  out << "  daemon a: " << r.commands[0] << "\n  daemon b: same\n";
  const double ms = 1e-3;
  bool lost = false;
  for (int d = 0; d < 2; ++d) {
    const DaemonReaders& readers = r.readers[d];
    out << absl::StrFormat(
        "  daemon %c (%s): deliveries %s of %s%s; latency p50 %.1f ms, p99 %.1f ms, max %.1f "
        "ms; RSS %s, peak %s\n",
        d == 0 ? 'a' : 'b', d == 0 ? "publishes" : "reads only", Thousands(readers.received),
        Thousands(readers.expected),
        readers.received == readers.expected
            ? ""
            : absl::StrCat(" -- LOST ", Thousands(readers.expected - readers.received), " (",
                           readers.incomplete_clients, " clients incomplete)"),
        readers.latency.Percentile(50) * ms, readers.latency.Percentile(99) * ms,
        readers.latency.max() * ms, Bytes(readers.daemon.rss), Bytes(readers.daemon.peak));
    lost = lost || readers.received != readers.expected;
    const std::string label = absl::StrCat("fan-out, ", Thousands(readers.connections),
                                           " conn on daemon ", d == 0 ? "a (publishes)" : "b");
    table.Add(ResultRow{absl::StrCat(label, ": p50 latency"),
                        absl::StrFormat("%.1f ms", readers.latency.Percentile(50) * ms), "-", 0, "",
                        ResultRow::Goal::kNone, 0});
    table.Add(ResultRow{absl::StrCat(label, ": p99 latency"),
                        absl::StrFormat("%.1f ms", readers.latency.Percentile(99) * ms), "-", 0, "",
                        ResultRow::Goal::kNone, 0});
  }
  table.Add(ResultRow{absl::StrCat("fan-out, ", Thousands(f.connections), " conn: p99 latency"),
                      absl::StrFormat("%.1f ms", r.latency.Percentile(99) * ms), "-", 0, "",
                      ResultRow::Goal::kNone, 0});
  table.Add(ResultRow{"fan-out publish rate achieved",
                      absl::StrFormat("%.1f ev/s", r.published.achieved_rate),
                      absl::StrFormat("scheduled %.0f ev/s", f.rate),
                      r.published.achieved_rate / f.rate, "x", ResultRow::Goal::kAtLeast, 0.95});
  const uint64_t expected = r.readers[0].expected + r.readers[1].expected;
  const uint64_t received = r.readers[0].received + r.readers[1].received;
  table.Add(ResultRow{"fan-out deliveries (all expected)",
                      absl::StrCat(Thousands(received), " of ", Thousands(expected)), "-", 0, "",
                      ResultRow::Goal::kNone, 0});
  if (lost) return absl::InternalError("fan-out events were lost (see above)");
  return absl::OkStatus();
}

absl::Status JetStreamBench::RunAll(JetStreamBenchOptions o, std::ostream& out) const {
  // libnats without lock spinning, as the jetstream driver opens it in a
  // daemon; here the raw client opens the library first, so both sides run
  // with it.
  nats_Open(0);
  KEEL_ASSIGN_OR_RETURN(std::unique_ptr<ScratchDir> scratch,
                        ScratchDir::Create(o.dir, "keel-bench-jetstream", o.keep));
  const std::string root = scratch->path();
  // Each SSE connection needs a descriptor here and one in a daemon (which
  // inherits this limit).
  std::string limit_note;
  if (o.cases.count("fanout")) {
    const uint64_t wanted = static_cast<uint64_t>(o.fanout.connections) + 512;
    const uint64_t limit = RaiseOpenFileLimit(wanted);
    limit_note = absl::StrCat("; RLIMIT_NOFILE ", limit);
    if (limit < wanted) {
      const int fit = static_cast<int>(limit > 1024 ? limit - 512 : limit / 2);
      out << "WARNING: cannot raise RLIMIT_NOFILE to " << wanted << " (hard limit " << limit
          << "); the fan-out runs " << fit << " connections instead of " << o.fanout.connections
          << "\n";
      limit_note += absl::StrCat(" (wanted ", wanted, "; connections reduced to ", fit, ")");
      o.fanout.connections = fit;
    }
  }
  out << "keel-bench jetstream"
      << (o.quick ? " --quick (smoke run: figures are not meaningful)" : "") << "\n  "
      << Thousands(o.events) << " single events from " << o.publishers << " publishers and "
      << Thousands(o.batch_events) << " events in batches of " << o.batch << " from "
      << o.batch_publishers << " publishers per round, " << o.payload_bytes
      << "-byte payloads over " << o.streams << " streams, " << o.rounds << " round(s)"
      << "\n  nats-server " << jetstream::testing::FindNatsServer()
      << "; machine: " << std::thread::hardware_concurrency() << " CPUs, load " << Load()
      << limit_note << "\n"
      << std::flush;
  const EventSet set = GenerateEvents(o);
  ResultTable table;
  if (o.cases.count("standalone") || o.cases.count("durable")) {
    KEEL_RETURN_IF_ERROR(RunServer(o, set, 1, root, table, out));
  }
  if (o.cases.count("cluster")) KEEL_RETURN_IF_ERROR(RunServer(o, set, 3, root, table, out));
  if (o.cases.count("fanout")) KEEL_RETURN_IF_ERROR(RunFanout(o, root, table, out));
  out << "\n";
  const int misses = table.Print(out);
  out << "\nratio = median over the rounds of (Keel's rate / the raw publisher's rate in the same "
         "round); the raw rate is the machine's. "
      << (misses == 0 ? "All targets met." : absl::StrCat(misses, " target(s) missed."))
      << " Targets are printed, not asserted. Load at the end: " << Load() << "\n";
  return absl::OkStatus();
}

}  // namespace

std::unique_ptr<BenchMode> NewJetStreamBench() { return std::make_unique<JetStreamBench>(); }

}  // namespace keel::bench
