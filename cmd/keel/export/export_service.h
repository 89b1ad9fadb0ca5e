// ExportService: a daemon's continuous lakehouse exports (`--export`), each
// a pass (RunExportPass) over its streams every `interval`, on one thread
// of its own, into a directory (the "fs" cold store: files are written to
// a temporary name, fsynced and linked into place without replacing).
//
// A failing stream is logged when its error changes and counted in the
// metrics; the export retries it on every pass, and the other streams go
// on. MetricsText gives the exports' part of /metrics.
//
// Thread safety: Start and Stop from one thread; MetricsText from any.
#ifndef KEEL_CMD_KEEL_EXPORT_EXPORT_SERVICE_H_
#define KEEL_CMD_KEEL_EXPORT_EXPORT_SERVICE_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "keel/cmd/keel/export/export_pass.h"
#include "keel/cmd/keel/export/export_source.h"
#include "keel/cmd/keel/export/export_spec.h"
#include "keel/coldstore/cold_store.h"
#include "keel/core/event_bus.h"
#include "keel/core/logger.h"
#include "keel/core/mutex.h"

namespace keel::lakehouse {

struct ExportServiceOptions {
  absl::Duration interval = absl::Seconds(1);  // Between two passes.
  ExportOptions files;                         // Its `name` is each spec's.
};

class ExportService {
 public:
  ExportService(EventBus& bus, std::vector<ExportSpec> specs, ExportServiceOptions options,
                Logger& logger);
  ~ExportService();

  // Opens the directories and starts the passes; an error when a directory
  // cannot be made or the bus cannot be exported.
  absl::Status Start();
  // Stops the current pass before its next file, and the thread.
  void Stop();

  std::string MetricsText() const;

 private:
  struct Totals {
    uint64_t passes = 0;
    StreamExportReport files;  // Summed over passes; `lag` is the last pass's.
    uint64_t failures = 0;     // Stream passes that failed.
    uint64_t streams = 0;      // Matched in the last pass.
  };
  struct Export {
    ExportSpec spec;
    std::unique_ptr<ColdStore> target;
    std::string last_error;  // Logged once per change.
  };

  void Run();
  void Pass(Export& job);

  EventBus& bus_;
  ExportServiceOptions options_;
  Logger& logger_;
  std::unique_ptr<ExportSource> source_;
  std::vector<Export> exports_;
  std::thread thread_;
  Notification stop_;
  std::atomic<bool> stopping_{false};  // Seen by a pass between two files.
  mutable Mutex mu_;
  std::vector<Totals> totals_ ABSL_GUARDED_BY(mu_);  // One per export.
};

}  // namespace keel::lakehouse

#endif  // KEEL_CMD_KEEL_EXPORT_EXPORT_SERVICE_H_
