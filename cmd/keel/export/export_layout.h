// ExportLayout: where a lakehouse export puts its files (rfcs/0011-lakehouse-export.md).
//
// Events go to JSON-lines files in hive-style partitions by the UTC day of
// their publish time, named after the stream and the first and last
// sequence they hold (zero-padded to 20 digits, so names sort by sequence):
//
//   stream=<s>/year=YYYY/month=MM/day=DD/<s>-<first>-<last>.jsonl
//
// or `.jsonl.zst` for a file compressed with zstd (one frame).
//
// A name depends only on what the file holds, so an export that a crash
// interrupted finds the file it had linked by its stream, day and first
// sequence, and a file never spans a day. Retention gaps an export ran
// into are recorded as one-row files beside, outside the event files'
// pattern (a `**/*.jsonl` glob does not read them):
//
//   _gaps/stream=<s>/<s>-<from>-<to>.json
//
// Thread safety: pure functions.
#ifndef KEEL_CMD_KEEL_EXPORT_EXPORT_LAYOUT_H_
#define KEEL_CMD_KEEL_EXPORT_EXPORT_LAYOUT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"

namespace keel::lakehouse {

enum class ExportCompression { kNone, kZstd };

// ".jsonl" or ".jsonl.zst".
absl::string_view EventFileSuffix(ExportCompression compression);

// The UTC day of `time`: the partition of an event published then.
absl::CivilDay ExportDayOf(absl::Time time);

// "stream=<s>/year=YYYY/month=MM/day=DD/".
std::string DayDirectory(absl::string_view stream, absl::CivilDay day);

// The object name of the file holding `first`..`last` of `stream`, on `day`.
std::string EventFileName(absl::string_view stream, absl::CivilDay day, uint64_t first,
                          uint64_t last, ExportCompression compression);

// The start every name of a file beginning at `first` shares: what to list
// to find one that an interrupted export left.
std::string EventFilePrefix(absl::string_view stream, absl::CivilDay day, uint64_t first);

struct EventFileRange {
  uint64_t first = 0;
  uint64_t last = 0;
  ExportCompression compression = ExportCompression::kNone;
};
// The sequences a name made by EventFileName holds, and how the file is
// compressed; nullopt for any other name.
std::optional<EventFileRange> ParseEventFileName(absl::string_view name, absl::string_view stream);

// The object name of the record of a retention gap: `from`..`to` of
// `stream` were trimmed before the export read them.
std::string GapFileName(absl::string_view stream, uint64_t from, uint64_t to);

}  // namespace keel::lakehouse

#endif  // KEEL_CMD_KEEL_EXPORT_EXPORT_LAYOUT_H_
