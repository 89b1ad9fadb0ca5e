// `keel-bench push`: push subscriptions (rfcs/0010) measured in process — a
// durable bus (sync=none) on a scratch directory, a PushService on it as
// `keel daemon` runs one, and a PushReceiver on 127.0.0.1 that answers
// every POST 200 at once:
//
//   1. throughput, one stream (three rounds, medians): N events (default
//      200,000) are published to a fresh stream in batches of 1,000. The
//      baseline reads them all through a consumer group, 100 at a time
//      (Consume + Commit: the page a push batch is made of). Then a
//      subscription with batches of 100 delivers them all to the receiver,
//      from its creation to the receiver's last event. Target: delivered
//      events/s >= 0.7x the group's read rate.
//   2. throughput, four streams of N/4: four group readers, one thread
//      each, against one subscription of concurrency 4 (a lane per stream).
//   3. latency: a subscription on another stream; events published
//      open loop at --push-rate (1,000/s) for --push-seconds, each carrying
//      its steady-clock publish time in its data; the receiver records
//      publish-to-receive latency (p50, p99, max).
//
// The machine's raw LevelDB batch rate (batches of 1,000, no sync) is
// printed beside them. A lost event (fewer delivered than published before
// the drain timeout) is an error (exit 1); a missed target is only printed.
#include <chrono>
#include <ostream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "keel/cmd/keel-bench/bench_mode.h"
#include "keel/cmd/keel-bench/bench_process.h"
#include "keel/cmd/keel-bench/bench_report.h"
#include "keel/cmd/keel-bench/push_receiver.h"
#include "keel/cmd/keel-bench/raw_leveldb.h"
#include "keel/cmd/keel/server/push/push_service.h"
#include "keel/core/driver_factory.h"
#include "keel/core/logger.h"
#include "keel/core/status_macros.h"

namespace keel::bench {
namespace {

constexpr char kLiveStream[] = "push.bench.live";
constexpr int kRounds = 3;
constexpr int kParallelStreams = 4;
constexpr size_t kPublishBatch = 1000;
constexpr size_t kDeliveryBatch = 100;

struct PushOptions {
  bool quick = false;
  std::string dir;
  bool keep = false;
  uint64_t events = 200'000;
  uint64_t payload_bytes = 100;
  double rate = 1000;
  double seconds = 10;
  double drain_timeout = 60;
};

int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Event BenchEvent(const std::string& stream, uint64_t n, const std::string& pad) {
  Event event;
  event.stream = stream;
  event.type = "bench.push";
  event.content_type = "application/json";
  event.payload = absl::StrCat(R"({"n":)", n, R"(,"pad":")", pad, R"(","ts":)", SteadyNanos(), "}");
  return event;
}

absl::Status PublishBulk(EventBus& bus, const std::string& stream, uint64_t events,
                         const PushOptions& o) {
  const std::string pad(o.payload_bytes, 'x');
  for (uint64_t i = 0; i < events; i += kPublishBatch) {
    std::vector<Event> batch;
    for (uint64_t n = i; n < i + kPublishBatch && n < events; ++n) {
      batch.push_back(BenchEvent(stream, n, pad));
    }
    KEEL_RETURN_IF_ERROR(bus.PublishBatch(stream, std::move(batch)).status());
  }
  return absl::OkStatus();
}

// Every event of `stream` read by a consumer group in pages of 100, each
// committed: the baseline.
absl::Status GroupRead(EventBus& bus, const std::string& stream, uint64_t events) {
  ConsumerGroups& groups = *bus.groups();
  uint64_t read = 0;
  while (read < events) {
    KEEL_ASSIGN_OR_RETURN(ConsumePage page,
                          groups.Consume({stream, "bench.baseline", kDeliveryBatch,
                                          absl::Seconds(30), ConsumeRequest::Start::kEarliest}));
    if (page.events.empty())
      return absl::DataLossError("the group read fewer events than published");
    read += page.events.size();
    KEEL_RETURN_IF_ERROR(groups.Commit(stream, "bench.baseline", page.lease.to, page.lease.token));
  }
  return absl::OkStatus();
}

// The baseline's rate over `streams`, each read by a thread of its own.
absl::StatusOr<double> GroupReadRate(EventBus& bus, const std::vector<std::string>& streams,
                                     uint64_t per_stream) {
  std::vector<absl::Status> results(streams.size());
  Stopwatch watch;
  {
    std::vector<std::jthread> readers;
    for (size_t i = 0; i < streams.size(); ++i) {
      readers.emplace_back([&, i] { results[i] = GroupRead(bus, streams[i], per_stream); });
    }
  }
  const double seconds = watch.Seconds();
  for (const absl::Status& result : results) KEEL_RETURN_IF_ERROR(result);
  return static_cast<double>(per_stream * streams.size()) / seconds;
}

absl::StatusOr<push::PushSubscription> Subscription(const std::string& name,
                                                    const std::string& streams,
                                                    const PushReceiver& receiver,
                                                    int concurrency = 1) {
  push::PushSubscription s;
  s.name = name;
  KEEL_ASSIGN_OR_RETURN(s.streams, push::StreamPattern::Parse(streams));
  s.endpoint = receiver.url();
  s.batch_size = kDeliveryBatch;
  s.concurrency = concurrency;
  s.secrets = {"keel-bench-push-signing-secret"};
  return s;
}

// Waits until `receiver` counted `events`; false after the drain timeout.
bool Drain(const PushReceiver& receiver, uint64_t events, double timeout) {
  Stopwatch watch;
  while (receiver.events() < events) {
    if (watch.Seconds() > timeout) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

// The rate at which `subscription` delivers `events` more to `receiver`,
// from its creation.
absl::StatusOr<double> PushRate(push::PushService& service,
                                const push::PushSubscription& subscription, PushReceiver& receiver,
                                uint64_t events, const PushOptions& o) {
  const uint64_t before = receiver.events();
  Stopwatch watch;
  KEEL_RETURN_IF_ERROR(service.Create(subscription).status());
  if (!Drain(receiver, before + events, o.drain_timeout)) {
    return absl::DataLossError(absl::StrCat("subscription ", subscription.name,
                                            ": the receiver got ", receiver.events() - before,
                                            " of ", events, " events"));
  }
  return static_cast<double>(events) / watch.Seconds();
}

struct Throughput {
  double push = 0;
  double group = 0;
  double ratio = 0;
  std::string rounds;  // Each round's ratio.
};

// Case 1: one stream per round; the medians of the rounds.
absl::StatusOr<Throughput> OneStream(EventBus& bus, push::PushService& service,
                                     PushReceiver& receiver, const PushOptions& o) {
  std::vector<double> pushes, groups, ratios;
  for (int round = 0; round < kRounds; ++round) {
    const std::string stream = absl::StrCat("push.bench.one.", round);
    KEEL_RETURN_IF_ERROR(PublishBulk(bus, stream, o.events, o));
    KEEL_ASSIGN_OR_RETURN(double group, GroupReadRate(bus, {stream}, o.events));
    KEEL_ASSIGN_OR_RETURN(push::PushSubscription one,
                          Subscription(absl::StrCat("one-", round), stream, receiver));
    KEEL_ASSIGN_OR_RETURN(double pushed, PushRate(service, one, receiver, o.events, o));
    pushes.push_back(pushed);
    groups.push_back(group);
    ratios.push_back(pushed / group);
  }
  std::string rounds;
  for (double ratio : ratios)
    absl::StrAppend(&rounds, rounds.empty() ? "" : " ", absl::StrFormat("%.2fx", ratio));
  return Throughput{Median(pushes), Median(groups), Median(ratios), rounds};
}

// Case 2: four streams, four readers against concurrency 4.
absl::StatusOr<Throughput> FourStreams(EventBus& bus, push::PushService& service,
                                       PushReceiver& receiver, const PushOptions& o) {
  const uint64_t per_stream = o.events / kParallelStreams;
  std::vector<std::string> streams;
  for (int i = 0; i < kParallelStreams; ++i) {
    streams.push_back(absl::StrCat("push.bench.four.", i));
    KEEL_RETURN_IF_ERROR(PublishBulk(bus, streams.back(), per_stream, o));
  }
  KEEL_ASSIGN_OR_RETURN(double group, GroupReadRate(bus, streams, per_stream));
  KEEL_ASSIGN_OR_RETURN(push::PushSubscription four,
                        Subscription("four", "push.bench.four.*", receiver, kParallelStreams));
  KEEL_ASSIGN_OR_RETURN(double pushed,
                        PushRate(service, four, receiver, per_stream * kParallelStreams, o));
  return Throughput{pushed, group, pushed / group, ""};
}

struct LiveResult {
  Histogram latencies;
  double achieved_rate = 0;
};

// Publishes open loop at `o.rate` for `o.seconds` on the live stream.
absl::Status PublishLive(EventBus& bus, const PushOptions& o, uint64_t count, LiveResult& result) {
  const std::string pad(o.payload_bytes, 'x');
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < count; ++i) {
    std::this_thread::sleep_until(start +
                                  std::chrono::nanoseconds(static_cast<int64_t>(1e9 * i / o.rate)));
    KEEL_RETURN_IF_ERROR(bus.Publish(BenchEvent(kLiveStream, i, pad)).status());
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.achieved_rate = static_cast<double>(count) / elapsed;
  return absl::OkStatus();
}

class PushBench : public BenchMode {
 public:
  absl::string_view name() const override { return "push"; }
  absl::string_view summary() const override {
    return "push subscriptions: delivery rate vs a consumer group's read rate, latency at 1,000/s";
  }
  void AddOptions(po::options_description& options) const override {
    options.add_options()("quick", "a short run (20,000 events, 3 s of latency)")(
        "dir", po::value<std::string>(), "parent of the scratch directory (default: /tmp)")(
        "keep", "keep the scratch directory")("push-events",
                                              po::value<uint64_t>()->default_value(200'000),
                                              "events of the throughput case")(
        "push-payload-bytes", po::value<uint64_t>()->default_value(100), "padding in each event")(
        "push-rate", po::value<double>()->default_value(1000), "events/s of the latency case")(
        "push-seconds", po::value<double>()->default_value(10), "length of the latency case")(
        "push-drain-timeout", po::value<double>()->default_value(60),
        "seconds to wait for the last delivery");
  }

  int Run(const po::variables_map& vars, BenchIo& io) const override {
    PushOptions o;
    o.quick = vars.count("quick") > 0;
    if (vars.count("dir")) o.dir = vars["dir"].as<std::string>();
    o.keep = vars.count("keep") > 0;
    o.events =
        o.quick && vars["push-events"].defaulted() ? 20'000 : vars["push-events"].as<uint64_t>();
    o.payload_bytes = vars["push-payload-bytes"].as<uint64_t>();
    o.rate = vars["push-rate"].as<double>();
    o.seconds = o.quick && vars["push-seconds"].defaulted() ? 3 : vars["push-seconds"].as<double>();
    o.drain_timeout = vars["push-drain-timeout"].as<double>();
    if (o.events == 0 || o.rate <= 0 || o.seconds <= 0) {
      io.err << "keel-bench push: --push-events, --push-rate and --push-seconds must be positive\n";
      return kExitUsage;
    }
    absl::Status run = RunCases(o, io);
    if (!run.ok()) {
      io.err << "keel-bench push: " << run.message() << "\n";
      return kExitFailure;
    }
    return kExitOk;
  }

 private:
  static absl::Status RunCases(const PushOptions& o, BenchIo& io) {
    KEEL_ASSIGN_OR_RETURN(std::unique_ptr<ScratchDir> scratch,
                          ScratchDir::Create(o.dir, "keel-bench-push", o.keep));
    KEEL_ASSIGN_OR_RETURN(double raw_rate,
                          RawWriteRate(scratch->path() + "/raw", o.events, kPublishBatch,
                                       o.payload_bytes + 60, /*sync=*/false));
    KEEL_ASSIGN_OR_RETURN(
        double synced_rate,
        RawWriteRate(scratch->path() + "/raw-synced", o.quick ? 500 : 3000, 1, 80, /*sync=*/true));
    KEEL_ASSIGN_OR_RETURN(std::unique_ptr<EventBus> bus,
                          CreateBus("durable", Config{{"store", "leveldb"},
                                                      {"store.path", scratch->path() + "/bus"},
                                                      {"sync", "none"}}));
    KEEL_ASSIGN_OR_RETURN(std::unique_ptr<PushReceiver> receiver, PushReceiver::Start());
    std::shared_ptr<Logger> logger = Logger::Default();
    push::PushService service(*bus, push::PushServiceOptions{}, *logger);
    KEEL_RETURN_IF_ERROR(service.Start());
    KEEL_ASSIGN_OR_RETURN(Throughput one, OneStream(*bus, service, *receiver, o));
    KEEL_ASSIGN_OR_RETURN(Throughput four, FourStreams(*bus, service, *receiver, o));
    const uint64_t bulk_requests = receiver->requests();
    const uint64_t bulk_events = receiver->events();
    receiver->TakeLatencies();  // The bulk events waited in the store: not latency.

    KEEL_ASSIGN_OR_RETURN(push::PushSubscription live,
                          Subscription("live", kLiveStream, *receiver));
    KEEL_RETURN_IF_ERROR(service.Create(live).status());
    const uint64_t live_events = static_cast<uint64_t>(o.rate * o.seconds);
    LiveResult result;
    KEEL_RETURN_IF_ERROR(PublishLive(*bus, o, live_events, result));
    if (!Drain(*receiver, bulk_events + live_events, o.drain_timeout)) {
      return absl::DataLossError(absl::StrCat("the receiver got ", receiver->events() - bulk_events,
                                              " of ", live_events, " live events"));
    }
    result.latencies = receiver->TakeLatencies();
    service.Stop();
    KEEL_RETURN_IF_ERROR(bus->Close());

    io.out << "keel-bench push: " << Thousands(o.events) << " events a case of " << o.payload_bytes
           << " bytes of padding, durable sync=none, batches of " << kDeliveryBatch << " ("
           << Thousands(bulk_requests) << " POSTs in all; one stream: median of " << kRounds
           << " rounds: " << one.rounds
           << "); raw LevelDB batch of 1,000: " << EventsPerSecond(raw_rate)
           << "; raw LevelDB synced single write: " << Thousands(static_cast<uint64_t>(synced_rate))
           << "/s (a group's lease and commit records are synced writes)\n";
    ResultTable table;
    table.Add(ResultRow{"one stream: push vs consumer-group read", EventsPerSecond(one.push),
                        EventsPerSecond(one.group), one.ratio, "x", ResultRow::Goal::kAtLeast,
                        0.7});
    table.Add(ResultRow{"4 streams: concurrency 4 vs 4 group readers", EventsPerSecond(four.push),
                        EventsPerSecond(four.group), four.ratio, "x", ResultRow::Goal::kNone, 0});
    const auto millis = [](uint64_t micros) { return Duration(micros / 1e6); };
    table.Add(ResultRow{absl::StrFormat("latency at %.0f/s: p50", result.achieved_rate),
                        millis(result.latencies.Percentile(50)), "-", 0, "", ResultRow::Goal::kNone,
                        0});
    table.Add(ResultRow{"latency: p99", millis(result.latencies.Percentile(99)), "-", 0, "",
                        ResultRow::Goal::kNone, 0});
    table.Add(ResultRow{"latency: max", millis(result.latencies.max()), "-", 0, "",
                        ResultRow::Goal::kNone, 0});
    table.Print(io.out);
    return absl::OkStatus();
  }
};

}  // namespace

std::unique_ptr<BenchMode> NewPushBench() { return std::make_unique<PushBench>(); }

}  // namespace keel::bench
