// `keel-bench cold`: cold segments (rfcs/0008-cold-segments.md) on the `fs`
// cold store, in process, each figure against a baseline of the same run:
//
//   1. replay: N events (default 1,000,000) published to two streams of one
//      durable bus (LevelDB, sync=none, an fs cold store in the scratch
//      directory): "cold", declared with hot.max_events=H (10,000), which
//      the trimmer's Trim calls then tier until only its hot window is
//      left, and "hot", without a hot bound, all of it hot. Both are
//      replayed from earliest in Replayer pages of P (1,000), alternating,
//      R rounds (3). Target: cold replay >= 0.5x hot replay.
//   2. ceiling: the cold stream's segment files read with plain read(2),
//      and read and decoded with DecodeSegment (every checksum) — what a
//      cold replay could reach with nothing else of Keel in the way.
//   3. tiering while publishing: N events published by one publisher in
//      batches of 1,000 to a stream with hot.max_events=H on a fresh bus,
//      with a trimmer thread calling Trim as the daemon's does (back to
//      back while NeedsTrim, else every 10 ms), against the same publish
//      with no trimmer; alternating, R rounds. Target: >= 0.8x.
//
// The machine's raw LevelDB rates (unsynced batches of 1,000; synced single
// writes: the fsync rate) are printed beside them. Figures are medians over
// rounds; a ratio is the median of the per-round ratios. A replay that
// returns other events than published is an error (exit 1); a missed target
// is only printed.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <ostream>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "keel/cmd/keel-bench/bench_mode.h"
#include "keel/cmd/keel-bench/bench_process.h"
#include "keel/cmd/keel-bench/bench_report.h"
#include "keel/cmd/keel-bench/raw_leveldb.h"
#include "keel/cmd/keel-bench/raw_segments.h"
#include "keel/core/driver_factory.h"
#include "keel/core/status_macros.h"

namespace keel::bench {
namespace {

namespace fs = std::filesystem;

constexpr char kColdStream[] = "cold";
constexpr char kHotStream[] = "hot";
constexpr char kPublishStream[] = "pub";
constexpr size_t kPublishBatch = 1000;
constexpr size_t kTrimBudget = 10'000;  // The daemon's default --trim budget.
constexpr size_t kPayloads = 1024;      // Distinct payloads the events cycle through.

struct ColdOptions {
  bool quick = false;
  std::string dir;
  bool keep = false;
  uint64_t events = 1'000'000;
  uint64_t payload_bytes = 100;
  uint64_t hot_events = 10'000;
  uint64_t segment_events = 4096;
  uint64_t page = 1000;
  int rounds = 3;
};

// Random payloads, so that LevelDB's compression of the hot events gets no
// easier data than the (uncompressed) segments.
std::vector<std::string> Payloads(size_t bytes) {
  std::mt19937_64 rng(20261207);
  std::vector<std::string> payloads(kPayloads, std::string(bytes, '\0'));
  for (std::string& payload : payloads) {
    for (char& c : payload) c = static_cast<char>(rng());
  }
  return payloads;
}

absl::Status PublishAll(EventBus& bus, const std::string& stream, uint64_t events,
                        const std::vector<std::string>& payloads) {
  for (uint64_t i = 0; i < events; i += kPublishBatch) {
    std::vector<Event> batch;
    batch.reserve(kPublishBatch);
    for (uint64_t n = i; n < i + kPublishBatch && n < events; ++n) {
      Event event;
      event.stream = stream;
      event.type = "bench.cold";
      event.content_type = "application/octet-stream";
      event.payload = payloads[n % payloads.size()];
      batch.push_back(std::move(event));
    }
    KEEL_RETURN_IF_ERROR(bus.PublishBatch(stream, std::move(batch)).status());
  }
  return absl::OkStatus();
}

// A durable bus on LevelDB (sync=none) with an fs cold store.
absl::StatusOr<std::unique_ptr<EventBus>> OpenColdBus(const std::string& path,
                                                      const ColdOptions& o) {
  KEEL_ASSIGN_OR_RETURN(
      std::unique_ptr<EventBus> bus,
      CreateBus("durable", Config{{"store", "leveldb"},
                                  {"store.path", path + "/store"},
                                  {"sync", "none"},
                                  {"cold_store", "fs:" + path + "/cold"},
                                  {"cold_segment_events", absl::StrCat(o.segment_events)}}));
  if (bus->tiers() == nullptr) return absl::InternalError("the durable bus has no cold tier");
  return bus;
}

absl::Status DeclareHotWindow(EventBus& bus, const std::string& stream, uint64_t hot_events) {
  StreamPolicy policy;
  policy.hot.max_events = hot_events;
  return bus.Declare(stream, policy);
}

// Trim until nothing is over a bound, as the daemon's trimmer does when it
// finds work; seconds.
absl::StatusOr<double> TierAll(EventBus& bus, uint64_t events) {
  Stopwatch watch;
  // Each call moves up to the budget: far fewer calls than this unless
  // tiering is stuck.
  const uint64_t max_calls = 4 * (events / kTrimBudget) + 100;
  for (uint64_t calls = 0; bus.NeedsTrim(); ++calls) {
    if (calls == max_calls) return absl::InternalError("tiering made no progress");
    KEEL_RETURN_IF_ERROR(bus.Trim(kTrimBudget).status());
  }
  return watch.Seconds();
}

// Replays all of `stream` from earliest; seconds. Fails unless it returns
// sequences 1..events in order.
absl::StatusOr<double> ReplayAll(Replayer& replayer, const std::string& stream, uint64_t events,
                                 uint64_t page) {
  ReplayRequest request;
  request.stream = stream;
  request.limit = page;
  uint64_t next = 1;
  Stopwatch watch;
  while (true) {
    KEEL_ASSIGN_OR_RETURN(ReplayPage got, replayer.Replay(request));
    for (const Event& event : got.events) {
      if (event.sequence != next) {
        return absl::InternalError(absl::StrCat("replay of '", stream, "' returned event ",
                                                event.sequence, " where ", next, " was due"));
      }
      ++next;
    }
    if (got.reached_end) break;
    request.after = Position::After(got.next);
  }
  const double seconds = watch.Seconds();
  if (next != events + 1) {
    return absl::InternalError(
        absl::StrCat("replay of '", stream, "' returned ", next - 1, " of ", events, " events"));
  }
  return seconds;
}

struct PublishRound {
  double seconds = 0;
  uint64_t tiered = 0;  // Events the trimmer moved to cold while the publisher ran.
};

// One publish of `o.events` to a fresh bus, with or without a trimmer
// thread running beside it.
absl::StatusOr<PublishRound> PublishWhileTiering(const std::string& path, const ColdOptions& o,
                                                 const std::vector<std::string>& payloads,
                                                 bool tiering) {
  KEEL_ASSIGN_OR_RETURN(std::unique_ptr<EventBus> bus, OpenColdBus(path, o));
  KEEL_RETURN_IF_ERROR(DeclareHotWindow(*bus, kPublishStream, o.hot_events));
  std::atomic<bool> stop{false};
  absl::Status trimmed;
  std::thread trimmer;
  if (tiering) {
    trimmer = std::thread([&] {
      while (!stop.load()) {
        if (!bus->NeedsTrim()) {
          absl::SleepFor(absl::Milliseconds(10));
          continue;
        }
        if (absl::StatusOr<TrimReport> report = bus->Trim(kTrimBudget); !report.ok()) {
          trimmed = report.status();
          return;
        }
      }
    });
  }
  PublishRound round;
  Stopwatch watch;
  absl::Status published = PublishAll(*bus, kPublishStream, o.events, payloads);
  round.seconds = watch.Seconds();
  stop.store(true);
  if (trimmer.joinable()) trimmer.join();
  KEEL_RETURN_IF_ERROR(published);
  KEEL_RETURN_IF_ERROR(trimmed);
  KEEL_ASSIGN_OR_RETURN(StreamTiers tiers, bus->tiers()->TiersOf(kPublishStream));
  round.tiered = tiers.hot_first_sequence - 1;
  KEEL_RETURN_IF_ERROR(bus->Close());
  bus.reset();
  std::error_code ignored;
  fs::remove_all(path, ignored);
  return round;
}

std::vector<double> Rates(uint64_t events, const std::vector<double>& seconds) {
  std::vector<double> rates;
  for (double s : seconds) rates.push_back(static_cast<double>(events) / s);
  return rates;
}

double MedianRatio(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> ratios;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) ratios.push_back(a[i] / b[i]);
  return Median(ratios);
}

class ColdBench : public BenchMode {
 public:
  absl::string_view name() const override { return "cold"; }
  absl::string_view summary() const override {
    return "cold segments on the fs store: replay from cold vs hot, the raw read rate of the "
           "segment files, publishing while tiering vs not";
  }
  void AddOptions(po::options_description& options) const override {
    options.add_options()("quick", "a short run (20,000 events, one round)")(
        "dir", po::value<std::string>(), "parent of the scratch directory (default: /tmp)")(
        "keep", "keep the scratch directory")(
        "cold-events", po::value<uint64_t>()->default_value(1'000'000),
        "events of each stream (replay) and of each publish (tiering)")(
        "cold-payload-bytes", po::value<uint64_t>()->default_value(100), "payload of each event")(
        "cold-hot-events", po::value<uint64_t>()->default_value(10'000),
        "the hot window (hot.max_events) of the tiered streams")(
        "cold-segment-events", po::value<uint64_t>()->default_value(4096),
        "events per segment (the durable driver's cold_segment_events)")(
        "cold-page", po::value<uint64_t>()->default_value(1000), "events per Replayer page")(
        "rounds", po::value<int>()->default_value(3), "alternating repetitions of each case");
  }

  int Run(const po::variables_map& vars, BenchIo& io) const override {
    ColdOptions o;
    o.quick = vars.count("quick") > 0;
    if (vars.count("dir")) o.dir = vars["dir"].as<std::string>();
    o.keep = vars.count("keep") > 0;
    const auto pick = [&](const char* name, uint64_t quick_value) {
      return o.quick && vars[name].defaulted() ? quick_value : vars[name].as<uint64_t>();
    };
    o.events = pick("cold-events", 20'000);
    o.payload_bytes = vars["cold-payload-bytes"].as<uint64_t>();
    o.hot_events = pick("cold-hot-events", 1000);
    o.segment_events = pick("cold-segment-events", 500);
    o.page = vars["cold-page"].as<uint64_t>();
    o.rounds = o.quick && vars["rounds"].defaulted() ? 1 : vars["rounds"].as<int>();
    if (o.events == 0 || o.segment_events == 0 || o.page == 0 || o.page > kMaxReplayLimit ||
        o.rounds < 1 || o.hot_events >= o.events) {
      io.err << "keel-bench cold: counts must be positive, --cold-page at most " << kMaxReplayLimit
             << " and --cold-hot-events below --cold-events\n";
      return kExitUsage;
    }
    absl::Status run = RunCases(o, io);
    if (!run.ok()) {
      io.err << "keel-bench cold: " << run.message() << "\n";
      return kExitFailure;
    }
    return kExitOk;
  }

 private:
  static absl::Status RunCases(const ColdOptions& o, BenchIo& io) {
    std::ostream& out = io.out;
    KEEL_ASSIGN_OR_RETURN(std::unique_ptr<ScratchDir> scratch,
                          ScratchDir::Create(o.dir, "keel-bench-cold", o.keep));
    const std::string root = scratch->path();
    KEEL_ASSIGN_OR_RETURN(double raw_rate, RawWriteRate(root + "/raw", o.quick ? 20'000 : 200'000,
                                                        kPublishBatch, o.payload_bytes + 60,
                                                        /*sync=*/false));
    KEEL_ASSIGN_OR_RETURN(double synced_rate,
                          RawWriteRate(root + "/raw-synced", o.quick ? 200 : 2000, 1, 80,
                                       /*sync=*/true));
    std::error_code ignored;
    fs::remove_all(root + "/raw", ignored);
    fs::remove_all(root + "/raw-synced", ignored);
    out << "keel-bench cold: " << Thousands(o.events) << " events of " << o.payload_bytes
        << " bytes a stream, durable sync=none, fs cold store, segments of "
        << Thousands(o.segment_events) << " events, hot window " << Thousands(o.hot_events) << ", "
        << o.rounds << " rounds\n  machine: raw LevelDB batch of 1,000 "
        << EventsPerSecond(raw_rate) << "; raw LevelDB synced single write "
        << Thousands(static_cast<uint64_t>(synced_rate)) << "/s\n"
        << std::flush;

    const std::vector<std::string> payloads = Payloads(o.payload_bytes);
    ResultTable table;

    // 1 and 2: replay and the ceiling.
    const std::string bus_dir = root + "/replay";
    KEEL_ASSIGN_OR_RETURN(std::unique_ptr<EventBus> bus, OpenColdBus(bus_dir, o));
    KEEL_RETURN_IF_ERROR(DeclareHotWindow(*bus, kColdStream, o.hot_events));
    Stopwatch publish_watch;
    KEEL_RETURN_IF_ERROR(PublishAll(*bus, kColdStream, o.events, payloads));
    KEEL_RETURN_IF_ERROR(PublishAll(*bus, kHotStream, o.events, payloads));
    const double publish_seconds = publish_watch.Seconds();
    KEEL_ASSIGN_OR_RETURN(double tier_seconds, TierAll(*bus, o.events));
    KEEL_ASSIGN_OR_RETURN(StreamTiers tiers, bus->tiers()->TiersOf(kColdStream));
    const uint64_t cold_events = tiers.hot_first_sequence - 1;
    if (cold_events == 0) return absl::InternalError("nothing was tiered");
    out << "\n[1, 2] replay, and the segment files read raw: published 2 x " << Thousands(o.events)
        << " in " << Duration(publish_seconds) << "; tiered " << Thousands(cold_events)
        << " events into " << Thousands(tiers.cold_segments) << " segments ("
        << Bytes(tiers.cold_bytes) << ") in " << Duration(tier_seconds) << " ("
        << EventsPerSecond(static_cast<double>(cold_events) / tier_seconds) << "); pages of "
        << o.page << "\n";
    std::vector<double> cold_s, hot_s, raw_s, decode_s;
    SegmentsRead raw_read, decoded;
    for (int round = 0; round < o.rounds; ++round) {
      KEEL_ASSIGN_OR_RETURN(double cold,
                            ReplayAll(*bus->replayer(), kColdStream, o.events, o.page));
      KEEL_ASSIGN_OR_RETURN(double hot, ReplayAll(*bus->replayer(), kHotStream, o.events, o.page));
      KEEL_ASSIGN_OR_RETURN(raw_read, ReadSegmentFiles(bus_dir + "/cold"));
      KEEL_ASSIGN_OR_RETURN(decoded, DecodeSegmentFiles(bus_dir + "/cold"));
      if (decoded.events != cold_events) {
        return absl::InternalError(absl::StrCat("the segment files hold ", decoded.events,
                                                " events; ", cold_events, " were tiered"));
      }
      cold_s.push_back(cold);
      hot_s.push_back(hot);
      raw_s.push_back(raw_read.seconds);
      decode_s.push_back(decoded.seconds);
      out << "  round " << round + 1 << ": cold " << Duration(cold) << ", hot " << Duration(hot)
          << ", read(2) " << Duration(raw_read.seconds) << ", decode " << Duration(decoded.seconds)
          << "\n"
          << std::flush;
    }
    const ColdStats stats = bus->tiers()->Stats();
    KEEL_RETURN_IF_ERROR(bus->Close());
    bus.reset();
    fs::remove_all(bus_dir, ignored);

    const std::vector<double> cold_rates = Rates(o.events, cold_s);
    const std::vector<double> hot_rates = Rates(o.events, hot_s);
    table.Add(ResultRow{"1 replay from cold vs from hot", EventsPerSecond(Median(cold_rates)),
                        absl::StrCat("hot: ", EventsPerSecond(Median(hot_rates))),
                        MedianRatio(cold_rates, hot_rates), "", ResultRow::Goal::kAtLeast, 0.5});
    // The ceiling counts the cold events only: the files hold no others.
    const std::vector<double> cold_only = Rates(cold_events, cold_s);
    const std::vector<double> raw_rates = Rates(cold_events, raw_s);
    const std::vector<double> decode_rates = Rates(cold_events, decode_s);
    const double bytes_per_event = static_cast<double>(raw_read.bytes) / cold_events;
    table.Add(ResultRow{"2 replay from cold vs read(2) of its files",
                        EventsPerSecond(Median(cold_only)),
                        absl::StrCat("read(2): ", EventsPerSecond(Median(raw_rates)), " ",
                                     MiBPerSecond(Median(raw_rates) * bytes_per_event)),
                        MedianRatio(cold_only, raw_rates), "", ResultRow::Goal::kNone, 0});
    table.Add(ResultRow{"2 replay from cold vs read + DecodeSegment",
                        EventsPerSecond(Median(cold_only)),
                        absl::StrCat("decode: ", EventsPerSecond(Median(decode_rates))),
                        MedianRatio(cold_only, decode_rates), "", ResultRow::Goal::kNone, 0});

    // 3: publishing while tiering.
    out << "\n[3] tiering while publishing: " << Thousands(o.events)
        << " events, one publisher, batches of " << kPublishBatch << ", hot window "
        << Thousands(o.hot_events) << "\n";
    std::vector<double> with_s, without_s;
    for (int round = 0; round < o.rounds; ++round) {
      const std::string path = absl::StrCat(root, "/publish-", round);
      KEEL_ASSIGN_OR_RETURN(PublishRound without,
                            PublishWhileTiering(path + "-without", o, payloads, false));
      KEEL_ASSIGN_OR_RETURN(PublishRound with,
                            PublishWhileTiering(path + "-with", o, payloads, true));
      without_s.push_back(without.seconds);
      with_s.push_back(with.seconds);
      out << "  round " << round + 1 << ": without tiering " << Duration(without.seconds)
          << ", with " << Duration(with.seconds) << " (" << Thousands(with.tiered)
          << " events tiered meanwhile)\n"
          << std::flush;
    }
    const std::vector<double> with_rates = Rates(o.events, with_s);
    const std::vector<double> without_rates = Rates(o.events, without_s);
    table.Add(ResultRow{"3 publish while tiering vs without", EventsPerSecond(Median(with_rates)),
                        absl::StrCat("without: ", EventsPerSecond(Median(without_rates))),
                        MedianRatio(with_rates, without_rates), "", ResultRow::Goal::kAtLeast,
                        0.8});

    out << "\n  cold tier of the replay bus: " << stats.segments << " segments, "
        << Bytes(stats.object_bytes) << ", " << stats.uploads << " uploads, "
        << stats.upload_failures << " failures, " << Thousands(stats.cold_reads)
        << " segment reads\n\n";
    const int misses = table.Print(out);
    out << "\nFigures are medians over rounds; each ratio is the median of the per-round "
           "ratios. "
        << (misses == 0 ? absl::StrCat("All targets met (", table.targets(), ").")
                        : absl::StrCat(misses, " of ", table.targets(), " targets missed."))
        << " Targets are printed, not asserted.\n";
    return absl::OkStatus();
  }
};

}  // namespace

std::unique_ptr<BenchMode> NewColdBench() { return std::make_unique<ColdBench>(); }

}  // namespace keel::bench
