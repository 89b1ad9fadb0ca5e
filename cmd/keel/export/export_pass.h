// RunExportPass: one pass of a lakehouse export over every stream a
// pattern matches (push/stream_pattern.h: a name, a prefix or a glob;
// dead-letter streams are not exported), each with ExportStream.
//
// A stream that fails (a file of other bytes in the way, a cursor of
// another incarnation) is reported and the pass goes on with the others.
//
// Thread safety: as ExportStream.
#ifndef KEEL_CMD_KEEL_EXPORT_EXPORT_PASS_H_
#define KEEL_CMD_KEEL_EXPORT_EXPORT_PASS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "keel/cmd/keel/export/stream_export.h"
#include "keel/cmd/keel/server/push/stream_pattern.h"

namespace keel::lakehouse {

struct StreamFailure {
  std::string stream;
  absl::Status status;
};

struct ExportPassReport {
  uint64_t streams = 0;       // Matched.
  StreamExportReport totals;  // Summed over them (exported_through: unused).
  std::vector<StreamFailure> failures;
};

// kInvalidArgument/kUnavailable... only when the streams cannot be listed.
absl::StatusOr<ExportPassReport> RunExportPass(ExportSource& source, ColdStore& target,
                                               const push::StreamPattern& pattern,
                                               const ExportOptions& options, const Clock& clock);

}  // namespace keel::lakehouse

#endif  // KEEL_CMD_KEEL_EXPORT_EXPORT_PASS_H_
