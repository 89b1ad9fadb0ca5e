// `keel-bench push`: push subscriptions (rfcs/0010) measured in process — a
// durable bus (sync=none) on a scratch directory, a PushService on it as
// `keel daemon` runs one, and a PushReceiver on 127.0.0.1 that answers
// every POST 200 at once:
//
//   1. throughput: N events (default 200,000) are published to one stream in
//      batches of 1,000. The baseline reads them all through a consumer
//      group, 100 at a time (Consume + Commit: the page a push batch is made
//      of). Then a subscription with batches of 100 delivers them all to the
//      receiver, from its creation to the receiver's last event. Target:
//      delivered events/s >= 0.7x the group's read rate.
//   2. latency: a second subscription on another stream; events published
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
#include "leveldb/write_batch.h"

namespace keel::bench {
namespace {

constexpr char kBulkStream[] = "push.bench.bulk";
constexpr char kLiveStream[] = "push.bench.live";
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

// Raw LevelDB: `events` keys of ~payload bytes in batches of 1,000, no sync.
absl::StatusOr<double> RawBatchRate(const std::string& path, const PushOptions& o) {
  KEEL_ASSIGN_OR_RETURN(std::unique_ptr<RawLevelDb> raw, RawLevelDb::Open(path));
  const std::string value(o.payload_bytes + 60, 'v');
  Stopwatch watch;
  for (uint64_t i = 0; i < o.events; i += kPublishBatch) {
    leveldb::WriteBatch batch;
    for (uint64_t j = i; j < i + kPublishBatch && j < o.events; ++j) {
      batch.Put(absl::StrFormat("e/%016d", j), value);
    }
    leveldb::Status s = raw->db().Write(leveldb::WriteOptions(), &batch);
    if (!s.ok()) return FromLevelDbStatus(s, path);
  }
  return static_cast<double>(o.events) / watch.Seconds();
}

absl::Status PublishBulk(EventBus& bus, const PushOptions& o) {
  const std::string pad(o.payload_bytes, 'x');
  for (uint64_t i = 0; i < o.events; i += kPublishBatch) {
    std::vector<Event> batch;
    for (uint64_t n = i; n < i + kPublishBatch && n < o.events; ++n) {
      batch.push_back(BenchEvent(kBulkStream, n, pad));
    }
    KEEL_RETURN_IF_ERROR(bus.PublishBatch(kBulkStream, std::move(batch)).status());
  }
  return absl::OkStatus();
}

// The baseline: every event of the bulk stream read by a consumer group in
// pages of 100, each committed.
absl::StatusOr<double> GroupReadRate(EventBus& bus, const PushOptions& o) {
  ConsumerGroups& groups = *bus.groups();
  Stopwatch watch;
  uint64_t read = 0;
  while (read < o.events) {
    KEEL_ASSIGN_OR_RETURN(ConsumePage page,
                          groups.Consume({kBulkStream, "bench.baseline", kDeliveryBatch,
                                          absl::Seconds(30), ConsumeRequest::Start::kEarliest}));
    if (page.events.empty())
      return absl::DataLossError("the group read fewer events than published");
    read += page.events.size();
    KEEL_RETURN_IF_ERROR(
        groups.Commit(kBulkStream, "bench.baseline", page.lease.to, page.lease.token));
  }
  return static_cast<double>(read) / watch.Seconds();
}

absl::StatusOr<push::PushSubscription> Subscription(const std::string& name,
                                                    const std::string& stream,
                                                    const PushReceiver& receiver) {
  push::PushSubscription s;
  s.name = name;
  KEEL_ASSIGN_OR_RETURN(s.streams, push::StreamPattern::Parse(stream));
  s.endpoint = receiver.url();
  s.batch_size = kDeliveryBatch;
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
    KEEL_ASSIGN_OR_RETURN(double raw_rate, RawBatchRate(scratch->path() + "/raw", o));
    KEEL_ASSIGN_OR_RETURN(std::unique_ptr<EventBus> bus,
                          CreateBus("durable", Config{{"store", "leveldb"},
                                                      {"store.path", scratch->path() + "/bus"},
                                                      {"sync", "none"}}));
    KEEL_RETURN_IF_ERROR(PublishBulk(*bus, o));
    KEEL_ASSIGN_OR_RETURN(double group_rate, GroupReadRate(*bus, o));
    KEEL_ASSIGN_OR_RETURN(std::unique_ptr<PushReceiver> receiver, PushReceiver::Start());
    std::shared_ptr<Logger> logger = Logger::Default();
    push::PushService service(*bus, push::PushServiceOptions{}, *logger);
    KEEL_RETURN_IF_ERROR(service.Start());

    KEEL_ASSIGN_OR_RETURN(push::PushSubscription bulk,
                          Subscription("bulk", kBulkStream, *receiver));
    Stopwatch watch;
    KEEL_RETURN_IF_ERROR(service.Create(bulk).status());
    if (!Drain(*receiver, o.events, o.drain_timeout)) {
      return absl::DataLossError(
          absl::StrCat("the receiver got ", receiver->events(), " of ", o.events, " events"));
    }
    const double push_rate = static_cast<double>(o.events) / watch.Seconds();
    const uint64_t bulk_requests = receiver->requests();
    receiver->TakeLatencies();  // The bulk events waited in the store: not latency.

    KEEL_ASSIGN_OR_RETURN(push::PushSubscription live,
                          Subscription("live", kLiveStream, *receiver));
    KEEL_RETURN_IF_ERROR(service.Create(live).status());
    const uint64_t live_events = static_cast<uint64_t>(o.rate * o.seconds);
    LiveResult result;
    KEEL_RETURN_IF_ERROR(PublishLive(*bus, o, live_events, result));
    if (!Drain(*receiver, o.events + live_events, o.drain_timeout)) {
      return absl::DataLossError(absl::StrCat("the receiver got ", receiver->events() - o.events,
                                              " of ", live_events, " live events"));
    }
    result.latencies = receiver->TakeLatencies();
    service.Stop();
    KEEL_RETURN_IF_ERROR(bus->Close());

    io.out << "keel-bench push: " << Thousands(o.events) << " events of " << o.payload_bytes
           << " bytes of padding, durable sync=none, batches of " << kDeliveryBatch << " ("
           << Thousands(bulk_requests)
           << " POSTs); raw LevelDB batch of 1,000: " << EventsPerSecond(raw_rate) << "\n";
    ResultTable table;
    table.Add(ResultRow{"push delivery vs consumer-group read", EventsPerSecond(push_rate),
                        EventsPerSecond(group_rate), push_rate / group_rate, "x",
                        ResultRow::Goal::kAtLeast, 0.7});
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
