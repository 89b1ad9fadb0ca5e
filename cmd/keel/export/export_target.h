// OpenExportTarget: the cold store an export writes its files to — the
// "fs" store on the spec's directory, or the "s3" store on its bucket and
// prefix with its store options (export_spec.h). Either way the files are
// linked without replacing, so the export's exactly-once holds on both.
//
// Thread safety: safe to call concurrently.
#ifndef KEEL_CMD_KEEL_EXPORT_EXPORT_TARGET_H_
#define KEEL_CMD_KEEL_EXPORT_EXPORT_TARGET_H_

#include <memory>

#include "absl/status/statusor.h"
#include "keel/cmd/keel/export/export_spec.h"
#include "keel/coldstore/cold_store.h"

namespace keel::lakehouse {

// The store's error (a bad option, an unwritable directory) with the
// target named in its message.
absl::StatusOr<std::unique_ptr<ColdStore>> OpenExportTarget(const ExportSpec& spec);

}  // namespace keel::lakehouse

#endif  // KEEL_CMD_KEEL_EXPORT_EXPORT_TARGET_H_
