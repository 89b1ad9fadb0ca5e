// `keel-bench export`: lakehouse exports (rfcs/0011-lakehouse-export.md),
// in process, against a baseline of the same run:
//
//   export: N events (default 1,000,000) of one stream, JSON payloads of B
//     bytes (256), on a durable bus (LevelDB, sync=none), exported in one
//     pass (ExportStream from the bus's Replayer) into a fresh directory of
//     the fs cold store: files of F events (100,000), each fsynced and
//     linked, the checkpoint moved after each. Baseline: the same bytes —
//     the files the export wrote, read back first — written to the same
//     disk as fresh files of the same sizes, each written with write(2)
//     and fsynced: what putting that output on this disk costs with
//     nothing of Keel in the way. Alternating, R rounds (3). Target:
//     export >= 0.5x the raw write.
//
// The machine's raw LevelDB rates (unsynced batches of 1,000; synced single
// writes: the fsync rate) are printed beside them. Figures are medians over
// rounds; a ratio is the median of the per-round ratios. An export that
// writes other than every event once is an error (exit 1).
//
//   collections: Collection::Put against plain single-event publishes of
//     the same documents (collection_put_bench.h). Target: >= 0.7x.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel-bench/bench_mode.h"
#include "keel/cmd/keel-bench/bench_process.h"
#include "keel/cmd/keel-bench/bench_report.h"
#include "keel/cmd/keel-bench/collection_put_bench.h"
#include "keel/cmd/keel-bench/raw_leveldb.h"
#include "keel/cmd/keel/export/bus_export_source.h"
#include "keel/cmd/keel/export/stream_export.h"
#include "keel/coldstore/fs/fs_cold_store.h"
#include "keel/core/clock.h"
#include "keel/core/driver_factory.h"
#include "keel/core/status_macros.h"

namespace keel::bench {
namespace {

namespace fs = std::filesystem;

constexpr char kStream[] = "lake";
constexpr size_t kPublishBatch = 1000;

struct ExportBenchOptions {
  bool quick = false;
  std::string dir;
  bool keep = false;
  uint64_t events = 1'000'000;
  uint64_t payload_bytes = 256;
  uint64_t file_events = 100'000;
  int rounds = 3;
};

// A JSON object of about `bytes` bytes that differs per event.
std::string Payload(uint64_t n, uint64_t bytes) {
  std::string payload = absl::StrCat(R"({"order":)", n, R"(,"note":")");
  const size_t filler = bytes > payload.size() + 2 ? bytes - payload.size() - 2 : 0;
  for (size_t i = 0; i < filler; ++i) payload.push_back(static_cast<char>('a' + (n + i) % 26));
  return payload + "\"}";
}

absl::Status PublishAll(EventBus& bus, const ExportBenchOptions& o) {
  for (uint64_t i = 0; i < o.events; i += kPublishBatch) {
    std::vector<Event> batch;
    for (uint64_t n = i; n < i + kPublishBatch && n < o.events; ++n) {
      Event event;
      event.stream = kStream;
      event.type = "order.created";
      event.content_type = "application/json";
      event.payload = Payload(n, o.payload_bytes);
      batch.push_back(std::move(event));
    }
    KEEL_RETURN_IF_ERROR(bus.PublishBatch(kStream, std::move(batch)).status());
  }
  return absl::OkStatus();
}

// Every file under `root`, in name order, with its bytes.
absl::StatusOr<std::vector<std::string>> ReadFiles(const std::string& root) {
  std::vector<fs::path> paths;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file()) paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> files;
  for (const fs::path& path : paths) {
    std::ifstream in(path, std::ios::binary);
    files.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return files;
}

// Writes each of `files` as a new file under `root` and fsyncs it and the
// directory; seconds.
absl::StatusOr<double> WriteRaw(const std::string& root, const std::vector<std::string>& files) {
  fs::create_directories(root);
  Stopwatch watch;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string path = absl::StrCat(root, "/", i, ".jsonl");
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) return absl::InternalError("cannot create " + path);
    size_t written = 0;
    while (written < files[i].size()) {
      const ssize_t n = write(fd, files[i].data() + written, files[i].size() - written);
      if (n <= 0) {
        close(fd);
        return absl::InternalError("cannot write " + path);
      }
      written += static_cast<size_t>(n);
    }
    const bool synced = fsync(fd) == 0;
    close(fd);
    if (!synced) return absl::InternalError("cannot fsync " + path);
    const int dir = open(root.c_str(), O_RDONLY | O_DIRECTORY);
    if (dir >= 0) {
      fsync(dir);
      close(dir);
    }
  }
  return watch.Seconds();
}

struct ExportRound {
  double seconds = 0;
  lakehouse::StreamExportReport report;
};

absl::StatusOr<ExportRound> ExportOnce(EventBus& bus, const std::string& root, int round,
                                       const ExportBenchOptions& o) {
  KEEL_ASSIGN_OR_RETURN(std::unique_ptr<lakehouse::BusExportSource> source,
                        lakehouse::BusExportSource::Create(bus));
  KEEL_ASSIGN_OR_RETURN(std::unique_ptr<FsColdStore> target, FsColdStore::Open(root));
  lakehouse::ExportOptions options;
  options.name = absl::StrCat("bench-", round);
  options.max_file_events = o.file_events;
  ExportRound result;
  Stopwatch watch;
  KEEL_ASSIGN_OR_RETURN(
      result.report, lakehouse::ExportStream(*source, *target, kStream, options, *Clock::Real()));
  result.seconds = watch.Seconds();
  if (result.report.events != o.events || result.report.exported_through != o.events) {
    return absl::InternalError(
        absl::StrCat("the export wrote ", result.report.events, " of ", o.events, " events"));
  }
  return result;
}

class ExportBench : public BenchMode {
 public:
  absl::string_view name() const override { return "export"; }
  absl::string_view summary() const override {
    return "lakehouse export of a durable stream to JSON-lines files vs writing the same bytes "
           "raw to the same disk";
  }
  void AddOptions(po::options_description& options) const override {
    options.add_options()("quick", "a short run (20,000 events, one round)")(
        "dir", po::value<std::string>(), "parent of the scratch directory (default: /tmp)")(
        "keep", "keep the scratch directory")(
        "export-events", po::value<uint64_t>()->default_value(1'000'000), "events exported")(
        "export-payload-bytes", po::value<uint64_t>()->default_value(256),
        "bytes of each event's JSON payload")("export-file-events",
                                              po::value<uint64_t>()->default_value(100'000),
                                              "events per file at most")(
        "rounds", po::value<int>()->default_value(3), "alternating repetitions");
  }

  int Run(const po::variables_map& vars, BenchIo& io) const override {
    ExportBenchOptions o;
    o.quick = vars.count("quick") > 0;
    if (vars.count("dir")) o.dir = vars["dir"].as<std::string>();
    o.keep = vars.count("keep") > 0;
    o.events = o.quick && vars["export-events"].defaulted() ? 20'000
                                                            : vars["export-events"].as<uint64_t>();
    o.payload_bytes = vars["export-payload-bytes"].as<uint64_t>();
    o.file_events = vars["export-file-events"].as<uint64_t>();
    o.rounds = o.quick && vars["rounds"].defaulted() ? 1 : vars["rounds"].as<int>();
    if (o.events == 0 || o.file_events == 0 || o.rounds < 1) {
      io.err << "keel-bench export: counts must be positive\n";
      return kExitUsage;
    }
    absl::Status run = RunCases(o, io);
    if (!run.ok()) {
      io.err << "keel-bench export: " << run.message() << "\n";
      return kExitFailure;
    }
    return kExitOk;
  }

 private:
  static absl::Status RunCases(const ExportBenchOptions& o, BenchIo& io) {
    std::ostream& out = io.out;
    KEEL_ASSIGN_OR_RETURN(std::unique_ptr<ScratchDir> scratch,
                          ScratchDir::Create(o.dir, "keel-bench-export", o.keep));
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
    out << "keel-bench export: " << Thousands(o.events) << " events, JSON payloads of "
        << o.payload_bytes << " bytes, durable sync=none, files of " << Thousands(o.file_events)
        << " events, " << o.rounds << " rounds\n  machine: raw LevelDB batch of 1,000 "
        << EventsPerSecond(raw_rate) << "; raw LevelDB synced single write "
        << Thousands(static_cast<uint64_t>(synced_rate)) << "/s\n"
        << std::flush;

    KEEL_ASSIGN_OR_RETURN(
        std::unique_ptr<EventBus> bus,
        CreateBus("durable",
                  Config{{"store", "leveldb"}, {"store.path", root + "/store"}, {"sync", "none"}}));
    Stopwatch publish_watch;
    KEEL_RETURN_IF_ERROR(PublishAll(*bus, o));
    out << "  published " << Thousands(o.events) << " in " << Duration(publish_watch.Seconds())
        << "\n";
    std::vector<double> export_rates, raw_rates, ratios;
    uint64_t bytes = 0;
    for (int round = 0; round < o.rounds; ++round) {
      const std::string lake = absl::StrCat(root, "/lake-", round);
      KEEL_ASSIGN_OR_RETURN(ExportRound exported, ExportOnce(*bus, lake, round, o));
      KEEL_ASSIGN_OR_RETURN(std::vector<std::string> files, ReadFiles(lake));
      KEEL_ASSIGN_OR_RETURN(double raw_seconds,
                            WriteRaw(absl::StrCat(root, "/raw-", round), files));
      bytes = exported.report.bytes;
      const double events = static_cast<double>(o.events);
      export_rates.push_back(events / exported.seconds);
      raw_rates.push_back(events / raw_seconds);
      ratios.push_back(raw_seconds / exported.seconds);
      out << "  round " << round + 1 << ": export " << Duration(exported.seconds) << " ("
          << exported.report.files_written << " files, " << Bytes(exported.report.bytes)
          << "), raw write " << Duration(raw_seconds) << "\n"
          << std::flush;
      fs::remove_all(lake, ignored);
      fs::remove_all(absl::StrCat(root, "/raw-", round), ignored);
    }
    KEEL_RETURN_IF_ERROR(bus->Close());
    ResultTable table;
    const double export_rate = Median(export_rates);
    const double raw = Median(raw_rates);
    table.Add(
        {"export to JSON lines vs raw write of its bytes",
         absl::StrCat(
             EventsPerSecond(export_rate), " (",
             MiBPerSecond(export_rate * static_cast<double>(bytes) / static_cast<double>(o.events)),
             ")"),
         absl::StrCat(
             EventsPerSecond(raw), " (",
             MiBPerSecond(raw * static_cast<double>(bytes) / static_cast<double>(o.events)), ")"),
         Median(ratios), "x", ResultRow::Goal::kAtLeast, 0.5});
    CollectionPutOptions put_options;
    put_options.rounds = o.rounds;
    if (o.quick) {
      put_options.writes = 5'000;
      put_options.ids = 500;
    }
    KEEL_ASSIGN_OR_RETURN(ResultRow puts,
                          RunCollectionPutCase(root + "/collections", put_options, out));
    table.Add(std::move(puts));
    out << "\n";
    table.Print(out);
    return absl::OkStatus();
  }
};

}  // namespace

std::unique_ptr<BenchMode> NewExportBench() { return std::make_unique<ExportBench>(); }

}  // namespace keel::bench
