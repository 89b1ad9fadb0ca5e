#include "keel/cmd/keel/export/export_pass.h"

#include "keel/core/status_macros.h"

namespace keel::lakehouse {

absl::StatusOr<ExportPassReport> RunExportPass(ExportSource& source, ColdStore& target,
                                               const push::StreamPattern& pattern,
                                               const ExportOptions& options, const Clock& clock) {
  KEEL_ASSIGN_OR_RETURN(std::vector<std::string> streams,
                        source.ListStreams(pattern.literal_prefix()));
  ExportPassReport report;
  for (const std::string& stream : streams) {
    if (options.stop != nullptr && options.stop->load()) break;
    if (!pattern.Matches(stream)) continue;
    ++report.streams;
    absl::StatusOr<StreamExportReport> done = ExportStream(source, target, stream, options, clock);
    if (!done.ok()) {
      report.failures.push_back({stream, done.status()});
      continue;
    }
    AddCounts(report.totals, *done);
  }
  return report;
}

}  // namespace keel::lakehouse
