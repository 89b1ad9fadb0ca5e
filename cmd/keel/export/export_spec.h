// ExportSpec: one lakehouse export as a daemon's `--export` gives it —
// "PATTERN DIR", optionally followed by "name=NAME" — or the flags of
// `keel export`.
//
// The name keys the export's checkpoints (consumer group "export.<name>"
// on each stream): an export renamed starts over. Without one, the name is
// made from the directory's absolute path (its last component and a hash),
// so two exports to different directories never share checkpoints and
// `keel export` and a daemon writing the same directory on one machine do.
//
// Thread safety: a plain value type.
#ifndef KEEL_CMD_KEEL_EXPORT_EXPORT_SPEC_H_
#define KEEL_CMD_KEEL_EXPORT_EXPORT_SPEC_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/cmd/keel/server/push/stream_pattern.h"

namespace keel::lakehouse {

struct ExportSpec {
  push::StreamPattern pattern;
  std::string directory;  // Absolute.
  std::string name;
};

// kInvalidArgument saying what is wrong with `text`.
absl::StatusOr<ExportSpec> ParseExportSpec(absl::string_view text);

// The spec of a pattern, a directory and a name ("" for the default).
absl::StatusOr<ExportSpec> MakeExportSpec(absl::string_view pattern, absl::string_view directory,
                                          absl::string_view name);

}  // namespace keel::lakehouse

#endif  // KEEL_CMD_KEEL_EXPORT_EXPORT_SPEC_H_
