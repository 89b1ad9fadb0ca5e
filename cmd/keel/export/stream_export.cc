#include "keel/cmd/keel/export/stream_export.h"

#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/export/export_layout.h"
#include "keel/cmd/keel/export/row_queue.h"
#include "keel/cmd/keel/export/zstd_codec.h"
#include "keel/cmd/keel/server/json_codec.h"
#include "keel/core/cursor.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::lakehouse {
namespace {

// The next file of a pass: its first `count` queued rows, under `name`.
struct FileCut {
  size_t count = 0;
  std::string name;
  ExportCompression compression = ExportCompression::kNone;
};

// The file that an earlier pass linked at `first`, if any.
absl::StatusOr<std::optional<EventFileRange>> LinkedFile(ColdStore& target,
                                                         absl::string_view stream,
                                                         absl::CivilDay day, uint64_t first) {
  KEEL_ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects,
                        target.List(EventFilePrefix(stream, day, first)));
  for (const ObjectInfo& object : objects) {
    std::optional<EventFileRange> range = ParseEventFileName(object.name, stream);
    if (range && range->first == first) return range;
  }
  return std::nullopt;
}

// The rows of the file a crashed pass linked, first..last: exactly those,
// compressed as that file is (whatever this pass's options say), so that
// the range is never written twice under two names.
absl::StatusOr<FileCut> CutLinkedFile(RowQueue& rows, absl::string_view stream, absl::CivilDay day,
                                      const EventFileRange& linked) {
  const uint64_t first = rows.at(0).sequence;
  const uint64_t last = linked.last;
  const std::string name = EventFileName(stream, day, first, last, linked.compression);
  size_t count = 0;
  while (true) {
    KEEL_ASSIGN_OR_RETURN(bool has, rows.Has(count));
    if (!has || rows.at(count).sequence > last) break;
    ++count;
  }
  if (rows.at(count - 1).sequence != last) {
    return absl::DataLossError(absl::StrCat(
        "export file ", name, " holds events up to sequence ", last, " but the stream has ",
        rows.at(count - 1).sequence, " as its last: the bus lost events the export had written"));
  }
  return FileCut{count, name, linked.compression};
}

// The rows of a new file: one day, consecutive, within the size bounds.
// nullopt when the head ends it and it is not yet old enough to write.
absl::StatusOr<std::optional<FileCut>> CutNewFile(RowQueue& rows, absl::string_view stream,
                                                  absl::CivilDay day, const ExportOptions& options,
                                                  const Clock& clock) {
  size_t count = 0;
  size_t bytes = 0;
  bool closed = false;
  while (true) {
    KEEL_ASSIGN_OR_RETURN(bool has, rows.Has(count));
    if (!has) break;
    const ExportRow& row = rows.at(count);
    if (count > 0) {
      const bool continues = row.sequence == rows.at(count - 1).sequence + 1 &&
                             ExportDayOf(row.time) == day && count < options.max_file_events &&
                             bytes + row.json.size() + 1 <= options.max_file_bytes;
      if (!continues) {
        closed = true;
        break;
      }
    }
    bytes += row.json.size() + 1;
    ++count;
  }
  const ExportRow& first = rows.at(0);
  if (!closed && clock.Now() - first.time < options.flush_after) return std::nullopt;
  return FileCut{
      count,
      EventFileName(stream, day, first.sequence, rows.at(count - 1).sequence, options.compression),
      options.compression};
}

std::string FileLines(const RowQueue& rows, size_t count) {
  size_t size = 0;
  for (size_t i = 0; i < count; ++i) size += rows.at(i).json.size() + 1;
  std::string bytes;
  bytes.reserve(size);
  for (size_t i = 0; i < count; ++i) {
    bytes += rows.at(i).json;
    bytes.push_back('\n');
  }
  return bytes;
}

// Links the file `cut` names with `lines`, compressed as it says. A zstd
// file found under the name is compared by content: another libzstd may
// have compressed the same lines to other bytes.
absl::StatusOr<PutOutcome> LinkFile(ColdStore& target, const FileCut& cut, const std::string& lines,
                                    uint64_t& bytes) {
  if (cut.compression == ExportCompression::kNone) {
    bytes = lines.size();
    return target.PutIfAbsent(cut.name, lines);
  }
  KEEL_ASSIGN_OR_RETURN(const std::string compressed, ZstdCompress(lines));
  bytes = compressed.size();
  absl::StatusOr<PutOutcome> outcome = target.PutIfAbsent(cut.name, compressed);
  if (outcome.ok() || GetErrorKind(outcome.status()) != ErrorKind::kConflict) return outcome;
  KEEL_ASSIGN_OR_RETURN(const std::string existing, target.Read(cut.name));
  absl::StatusOr<std::string> content = ZstdDecompress(existing);
  if (content.ok() && *content == lines) return PutOutcome::kAlreadyPresent;
  return outcome;
}

absl::Status RecordGaps(ColdStore& target, absl::string_view stream,
                        const std::vector<MissedRange>& gaps, StreamExportReport& report) {
  for (const MissedRange& gap : gaps) {
    std::string row = "{\"stream\":";
    server::AppendJsonString(stream, row);
    absl::StrAppend(&row, ",\"fromSequence\":", gap.from, ",\"toSequence\":", gap.to,
                    ",\"missed\":", gap.to - gap.from + 1, "}\n");
    KEEL_ASSIGN_OR_RETURN(PutOutcome outcome,
                          target.PutIfAbsent(GapFileName(stream, gap.from, gap.to), row));
    if (outcome == PutOutcome::kCreated) {
      ++report.gaps;
      report.missed += gap.to - gap.from + 1;
    }
  }
  return absl::OkStatus();
}

// `status` with `context` before its message, its kind kept.
absl::Status WithContext(const absl::Status& status, absl::string_view context) {
  absl::Status out(status.code(), absl::StrCat(context, ": ", status.message()));
  status.ForEachPayload(
      [&out](absl::string_view url, const absl::Cord& payload) { out.SetPayload(url, payload); });
  return out;
}

absl::StatusOr<uint64_t> SequenceOf(const std::optional<std::string>& cursor) {
  if (!cursor) return 0;
  KEEL_ASSIGN_OR_RETURN(Cursor decoded, Cursor::Decode(*cursor));
  return decoded.sequence;
}

}  // namespace

void AddCounts(StreamExportReport& sum, const StreamExportReport& pass) {
  sum.files_written += pass.files_written;
  sum.files_adopted += pass.files_adopted;
  sum.events += pass.events;
  sum.bytes += pass.bytes;
  sum.gaps += pass.gaps;
  sum.missed += pass.missed;
  sum.lag += pass.lag;
}

std::string CheckpointGroup(absl::string_view export_name) {
  return absl::StrCat("export.", export_name);
}

absl::StatusOr<StreamExportReport> ExportStream(ExportSource& source, ColdStore& target,
                                                absl::string_view stream,
                                                const ExportOptions& options, const Clock& clock) {
  const std::string group = CheckpointGroup(options.name);
  KEEL_ASSIGN_OR_RETURN(std::optional<std::string> checkpoint, source.Checkpoint(stream, group));
  StreamExportReport report;
  KEEL_ASSIGN_OR_RETURN(report.exported_through, SequenceOf(checkpoint));
  RowQueue rows(source, std::string(stream), std::move(checkpoint), options.read_limit);
  while (options.stop == nullptr || !options.stop->load()) {
    KEEL_ASSIGN_OR_RETURN(bool any, rows.Has(0));
    KEEL_RETURN_IF_ERROR(RecordGaps(target, stream, rows.TakeGaps(), report));
    if (!any) break;
    const absl::CivilDay day = ExportDayOf(rows.at(0).time);
    KEEL_ASSIGN_OR_RETURN(std::optional<EventFileRange> linked,
                          LinkedFile(target, stream, day, rows.at(0).sequence));
    std::optional<FileCut> cut;
    if (linked) {
      KEEL_ASSIGN_OR_RETURN(cut, CutLinkedFile(rows, stream, day, *linked));
    } else {
      KEEL_ASSIGN_OR_RETURN(cut, CutNewFile(rows, stream, day, options, clock));
    }
    if (!cut) break;
    uint64_t bytes = 0;
    absl::StatusOr<PutOutcome> outcome = LinkFile(target, *cut, FileLines(rows, cut->count), bytes);
    if (!outcome.ok()) {
      return WithContext(outcome.status(), absl::StrCat("export file ", cut->name));
    }
    const ExportRow& last = rows.at(cut->count - 1);
    KEEL_RETURN_IF_ERROR(source.SetCheckpoint(stream, group, last.cursor));
    ++(*outcome == PutOutcome::kCreated ? report.files_written : report.files_adopted);
    report.events += cut->count;
    report.bytes += bytes;
    report.exported_through = last.sequence;
    rows.Drop(cut->count);
  }
  const uint64_t head = std::max(rows.head_sequence(), report.exported_through);
  report.lag = head - report.exported_through;
  return report;
}

}  // namespace keel::lakehouse
