#include "keel/cmd/keel/export/export_service.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/export/bus_export_source.h"
#include "keel/cmd/keel/export/export_target.h"
#include "keel/core/clock.h"
#include "keel/core/status_macros.h"

namespace keel::lakehouse {

ExportService::ExportService(EventBus& bus, std::vector<ExportSpec> specs,
                             ExportServiceOptions options, Logger& logger)
    : bus_(bus), options_(std::move(options)), logger_(logger) {
  for (ExportSpec& spec : specs) exports_.push_back(Export{std::move(spec), nullptr, ""});
}

ExportService::~ExportService() { Stop(); }

absl::Status ExportService::Start() {
  if (exports_.empty()) return absl::OkStatus();
  KEEL_ASSIGN_OR_RETURN(source_, BusExportSource::Create(bus_));
  for (Export& job : exports_) {
    KEEL_ASSIGN_OR_RETURN(job.target, OpenExportTarget(job.spec));
  }
  {
    MutexLock lock(&mu_);
    totals_.assign(exports_.size(), Totals{});
  }
  thread_ = std::thread([this] { Run(); });
  return absl::OkStatus();
}

void ExportService::Stop() {
  if (!thread_.joinable()) return;
  stopping_.store(true);
  stop_.Notify();
  thread_.join();
}

void ExportService::Run() {
  do {
    for (Export& job : exports_) {
      if (stop_.HasBeenNotified()) return;
      Pass(job);
    }
  } while (!stop_.WaitForNotificationWithTimeout(options_.interval));
}

void ExportService::Pass(Export& job) {
  ExportOptions files = options_.files;
  files.name = job.spec.name;
  files.compression = job.spec.compression;
  files.stop = &stopping_;
  absl::StatusOr<ExportPassReport> report =
      RunExportPass(*source_, *job.target, job.spec.pattern, files, *Clock::Real());
  std::string error;
  if (!report.ok()) {
    error = std::string(report.status().message());
  } else if (!report->failures.empty()) {
    const StreamFailure& first = report->failures.front();
    error = absl::StrCat("stream ", first.stream, ": ", first.status.message());
  }
  if (error != job.last_error) {
    if (!error.empty()) {
      logger_.Error(absl::StrCat("keel daemon: export ", job.spec.name, " to ", job.spec.target,
                                 ": ", error));
    } else {
      logger_.Info(absl::StrCat("keel daemon: export ", job.spec.name, " recovered"));
    }
    job.last_error = error;
  }
  MutexLock lock(&mu_);
  Totals& totals = totals_[&job - exports_.data()];
  ++totals.passes;
  if (!report.ok()) {
    ++totals.failures;
    return;
  }
  // Counters add up over passes; the lag is the last pass's.
  totals.files.lag = 0;
  AddCounts(totals.files, report->totals);
  totals.failures += report->failures.size();
  totals.streams = report->streams;
}

std::string ExportService::MetricsText() const {
  if (exports_.empty()) return "";
  struct Family {
    const char* name;
    const char* type;
    const char* help;
    uint64_t (*value)(const Totals&);
  };
  static constexpr Family kFamilies[] = {
      {"keel_export_files_total", "counter", "Files the export linked into its directory",
       [](const Totals& t) { return t.files.files_written; }},
      {"keel_export_files_adopted_total", "counter",
       "Files an interrupted pass had linked, found identical and kept",
       [](const Totals& t) { return t.files.files_adopted; }},
      {"keel_export_events_total", "counter", "Events written to files",
       [](const Totals& t) { return t.files.events; }},
      {"keel_export_bytes_total", "counter", "Bytes written to files",
       [](const Totals& t) { return t.files.bytes; }},
      {"keel_export_gaps_total", "counter", "Retention gaps recorded",
       [](const Totals& t) { return t.files.gaps; }},
      {"keel_export_missed_events_total", "counter", "Events retention removed before export",
       [](const Totals& t) { return t.files.missed; }},
      {"keel_export_failures_total", "counter", "Stream passes that failed",
       [](const Totals& t) { return t.failures; }},
      {"keel_export_lag_events", "gauge", "Events not yet exported, as of the last pass",
       [](const Totals& t) { return t.files.lag; }},
      {"keel_export_streams", "gauge", "Streams the pattern matched in the last pass",
       [](const Totals& t) { return t.streams; }},
  };
  MutexLock lock(&mu_);
  std::string out;
  for (const Family& family : kFamilies) {
    absl::StrAppend(&out, "# HELP ", family.name, " ", family.help, "\n# TYPE ", family.name, " ",
                    family.type, "\n");
    for (size_t i = 0; i < totals_.size(); ++i) {
      absl::StrAppend(&out, family.name, "{export=\"", exports_[i].spec.name, "\"} ",
                      family.value(totals_[i]), "\n");
    }
  }
  return out;
}

}  // namespace keel::lakehouse
