// ExportSpec: one lakehouse export as a daemon's `--export` gives it —
// "PATTERN TARGET" followed by any KEY=VALUE settings — or the flags of
// `keel export`.
//
// TARGET is a directory, or `s3://BUCKET[/PREFIX]` for a bucket of an
// S3-compatible object store (the cold store "s3" of
// coldstore/s3/s3_cold_store.h; its options — endpoint, region,
// credentials, timeouts — are settings too, credentials also from the
// usual AWS_* variables). The other settings:
//   name=NAME              keys the checkpoints (below)
//   compression=none|zstd  `.jsonl` files, or `.jsonl.zst`
//
// The name keys the export's checkpoints (consumer group "export.<name>"
// on each stream): an export renamed starts over. Without one, the name is
// made from the target (a directory's absolute path; an s3 URL with its
// endpoint) — its last component and a hash — so two exports to different
// targets never share checkpoints and `keel export` and a daemon writing the same target on
// one machine do.
//
// Thread safety: a plain value type.
#ifndef KEEL_CMD_KEEL_EXPORT_EXPORT_SPEC_H_
#define KEEL_CMD_KEEL_EXPORT_EXPORT_SPEC_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "keel/cmd/keel/export/export_layout.h"
#include "keel/cmd/keel/server/push/stream_pattern.h"
#include "keel/core/config.h"

namespace keel::lakehouse {

inline constexpr absl::string_view kS3TargetScheme = "s3://";

struct ExportSpec {
  push::StreamPattern pattern;
  std::string target;  // An absolute directory, or s3://BUCKET[/PREFIX].
  std::string name;
  ExportCompression compression = ExportCompression::kNone;
  Config store_options;  // An s3 target's store options; empty for a directory.

  bool object_store() const { return absl::StartsWith(target, kS3TargetScheme); }
};

// kInvalidArgument saying what is wrong with `text` (an s3 target's store
// options included).
absl::StatusOr<ExportSpec> ParseExportSpec(absl::string_view text);

// The spec of a pattern, a target and its settings (above).
absl::StatusOr<ExportSpec> MakeExportSpec(absl::string_view pattern, absl::string_view target,
                                          const Config& settings);

}  // namespace keel::lakehouse

#endif  // KEEL_CMD_KEEL_EXPORT_EXPORT_SPEC_H_
