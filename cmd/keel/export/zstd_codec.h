// Zstandard frames for compressed export files (`.jsonl.zst`), which
// DuckDB, Spark and `zstd -d` read as they are.
//
// Compression is deterministic for one libzstd version and level, so a
// rerun rebuilds an interrupted file's bytes; across a libzstd upgrade it
// may not be, so an export compares an existing file's decompressed
// content before calling it a clash (stream_export.cc).
//
// Thread safety: pure functions.
#ifndef KEEL_CMD_KEEL_EXPORT_ZSTD_CODEC_H_
#define KEEL_CMD_KEEL_EXPORT_ZSTD_CODEC_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace keel::lakehouse {

// One zstd frame holding `bytes`, at zstd's default level (3), with the
// content size and a checksum in the frame.
absl::StatusOr<std::string> ZstdCompress(absl::string_view bytes);

// The content of the frames in `frames`; kDataLoss when they are not whole
// zstd frames.
absl::StatusOr<std::string> ZstdDecompress(absl::string_view frames);

}  // namespace keel::lakehouse

#endif  // KEEL_CMD_KEEL_EXPORT_ZSTD_CODEC_H_
