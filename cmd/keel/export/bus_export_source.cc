#include "keel/cmd/keel/export/bus_export_source.h"

#include <utility>

#include "keel/cmd/keel/server/json_codec.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::lakehouse {
namespace {

// Streams listed per call: more than any daemon is expected to hold.
constexpr size_t kMaxStreams = 1'000'000;

}  // namespace

absl::StatusOr<std::unique_ptr<BusExportSource>> BusExportSource::Create(EventBus& bus) {
  if (bus.replayer() == nullptr || bus.groups() == nullptr) {
    return absl::UnimplementedError(
        "export needs a driver that keeps history and consumer groups for its checkpoints");
  }
  return std::unique_ptr<BusExportSource>(new BusExportSource(*bus.replayer(), *bus.groups()));
}

absl::StatusOr<std::vector<std::string>> BusExportSource::ListStreams(absl::string_view prefix) {
  KEEL_ASSIGN_OR_RETURN(std::vector<StreamInfo> infos, replayer_.ListStreams(prefix, kMaxStreams));
  std::vector<std::string> names;
  names.reserve(infos.size());
  for (StreamInfo& info : infos) names.push_back(std::move(info.stream));
  return names;
}

absl::StatusOr<ExportPage> BusExportSource::Read(absl::string_view stream,
                                                 const std::optional<std::string>& after,
                                                 size_t limit) {
  ReplayRequest request;
  request.stream = std::string(stream);
  request.limit = std::min(limit, kMaxReplayLimit);
  if (after.has_value()) {
    KEEL_ASSIGN_OR_RETURN(Cursor cursor, Cursor::Decode(*after));
    request.after = Position::After(cursor);
  }
  KEEL_ASSIGN_OR_RETURN(ReplayPage page, replayer_.Replay(request));
  ExportPage out;
  out.reached_end = page.reached_end;
  out.head_sequence = page.head_sequence;
  out.rows.reserve(page.events.size());
  const uint64_t epoch = replayer_.epoch();
  for (const Event& event : page.events) {
    ExportRow row;
    row.sequence = event.sequence;
    row.time = event.time;
    row.cursor = Cursor::For(event.stream, epoch, event.sequence).Encode();
    server::AppendEventJson(event, row.cursor, row.json);
    out.rows.push_back(std::move(row));
  }
  return out;
}

absl::StatusOr<std::optional<std::string>> BusExportSource::Checkpoint(absl::string_view stream,
                                                                       absl::string_view group) {
  absl::StatusOr<GroupInfo> info = groups_.Describe(stream, group);
  if (!info.ok() && GetErrorKind(info.status()) == ErrorKind::kNotFound) return std::nullopt;
  KEEL_RETURN_IF_ERROR(info.status());
  if (info->cursor.sequence == 0) return std::nullopt;
  return info->cursor.Encode();
}

absl::Status BusExportSource::SetCheckpoint(absl::string_view stream, absl::string_view group,
                                            absl::string_view cursor) {
  KEEL_ASSIGN_OR_RETURN(Cursor decoded, Cursor::Decode(cursor));
  return groups_.Seek(stream, group, Position::After(decoded));
}

}  // namespace keel::lakehouse
