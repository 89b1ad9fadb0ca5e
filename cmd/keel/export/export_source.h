// ExportSource: what a lakehouse export reads — a bus's streams, their
// events as the JSON rows it writes, and the export's checkpoints — either
// in the daemon's process (BusExportSource) or from a daemon over HTTP
// (the `keel export` command's source).
//
// A row's JSON is the event object of the HTTP API (rfcs/0004-http-api.md,
// with its cursor), so both sources yield the same bytes for one event.
// Checkpoints are consumer groups named after the export: their cursor is
// the last event in a file that the export linked, they live with the
// bus's data, and `keel group list` shows their lag.
//
// Errors are the bus's kinds (core/errors.h): Read fails with
// kRetentionGap when events after `after` were trimmed, kCursorMismatch
// when `after` names another incarnation or store.
//
// Thread safety: a source is used by one export pass at a time.
#ifndef KEEL_CMD_KEEL_EXPORT_EXPORT_SOURCE_H_
#define KEEL_CMD_KEEL_EXPORT_EXPORT_SOURCE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace keel::lakehouse {

struct ExportRow {
  uint64_t sequence = 0;
  absl::Time time;     // Publish time: which day's file the row goes to.
  std::string cursor;  // The event's cursor token.
  std::string json;    // One line of the file, without its newline.
};

struct ExportPage {
  std::vector<ExportRow> rows;  // Consecutive sequences, oldest first.
  bool reached_end = false;     // Nothing after the last row (when read).
  uint64_t head_sequence = 0;   // The stream's last sequence when read.
};

class ExportSource {
 public:
  virtual ~ExportSource() = default;

  // Streams whose names start with `prefix`, sorted.
  virtual absl::StatusOr<std::vector<std::string>> ListStreams(absl::string_view prefix) = 0;
  // Up to `limit` rows after the cursor token `after` (the oldest retained
  // when nullopt).
  virtual absl::StatusOr<ExportPage> Read(absl::string_view stream,
                                          const std::optional<std::string>& after,
                                          size_t limit) = 0;
  // The cursor token `group` holds on `stream`; nullopt when it has none.
  virtual absl::StatusOr<std::optional<std::string>> Checkpoint(absl::string_view stream,
                                                                absl::string_view group) = 0;
  // Moves `group` on `stream` to the cursor token `cursor`, durably.
  virtual absl::Status SetCheckpoint(absl::string_view stream, absl::string_view group,
                                     absl::string_view cursor) = 0;
};

}  // namespace keel::lakehouse

#endif  // KEEL_CMD_KEEL_EXPORT_EXPORT_SOURCE_H_
