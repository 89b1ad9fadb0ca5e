#include "keel/core/group_coordinator.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "keel/core/errors.h"
#include "keel/core/publish_validation.h"
#include "keel/core/status_macros.h"

namespace keel {
namespace {

absl::Status ValidateNames(absl::string_view stream, absl::string_view group) {
  KEEL_RETURN_IF_ERROR(ValidateStreamName(stream));
  return ValidateGroupName(group);
}

absl::Status ValidateConsume(const ConsumeRequest& request) {
  KEEL_RETURN_IF_ERROR(ValidateNames(request.stream, request.group));
  if (request.limit == 0 || request.limit > kMaxReplayLimit) {
    return InvalidArgument(
        absl::StrCat("limit must be between 1 and ", kMaxReplayLimit, "; got ", request.limit));
  }
  if (request.lease <= absl::ZeroDuration() || request.lease > kMaxLease) {
    return InvalidArgument(absl::StrCat("lease must be longer than 0 and at most ",
                                        absl::FormatDuration(kMaxLease), "; got ",
                                        absl::FormatDuration(request.lease)));
  }
  return absl::OkStatus();
}

// A group seen for the first time starts before the oldest retained event
// (not at 0: events trimmed before the group existed are no gap of its own),
// or at the head.
GroupRecord NewRecord(ConsumeRequest::Start start, const StreamInfo& info) {
  GroupRecord record;
  record.committed =
      start == ConsumeRequest::Start::kLatest ? info.last_sequence : info.first_sequence - 1;
  return record;
}

// A record written in an earlier store epoch (rfcs/0003-durable-layout.md,
// "Epochs"): its sequences from the first one the stream was given again,
// or past the head, named events an unsynced crash lost. The group goes back
// to just before them, to read the events that took those sequences (at
// least once, never skipped), and a lease over them ends.
GroupRecord InCurrentEpoch(GroupRecord record, const StreamInfo& info, uint64_t epoch) {
  if (record.epoch == epoch) return record;
  // Not listed (written before epochs, or in an epoch the store forgot):
  // older than every listed one, which entry 0 stands for.
  const EarlierEpoch* bound = EarlierEpochOf(info, record.epoch);
  if (bound == nullptr) bound = EarlierEpochOf(info, 0);
  uint64_t lost_from = info.last_sequence + 1;
  if (bound != nullptr) lost_from = std::min(lost_from, bound->valid_below);
  record.committed = std::min(record.committed, lost_from - 1);
  if (record.HasLease() && record.lease_to >= lost_from) record.EndLease();
  record.epoch = epoch;
  return record;
}

}  // namespace

absl::Status ValidateGroupName(absl::string_view group) {
  absl::Status status = ValidateStreamName(group);
  if (status.ok()) return status;
  return InvalidArgument(absl::StrReplaceAll(status.message(), {{"stream name", "group name"}}));
}

Mutex& GroupCoordinator::GroupMutex(absl::string_view stream, absl::string_view group) {
  const std::string key = GroupKey(stream, group);
  MutexLock lock(&locks_mu_);
  auto it = locks_.find(key);
  if (it == locks_.end()) it = locks_.emplace(key, std::make_unique<Mutex>()).first;
  return *it->second;
}

absl::StatusOr<std::optional<GroupRecord>> GroupCoordinator::Load(absl::string_view stream,
                                                                  absl::string_view group) {
  KEEL_ASSIGN_OR_RETURN(std::optional<std::string> text, store_.Get(GroupKey(stream, group)));
  if (!text) return std::nullopt;
  KEEL_ASSIGN_OR_RETURN(GroupRecord record, GroupRecord::Decode(*text));
  if (record.epoch == replayer_.epoch()) return record;
  KEEL_ASSIGN_OR_RETURN(StreamInfo info, replayer_.Bounds(stream));
  return InCurrentEpoch(record, info, replayer_.epoch());
}

absl::Status GroupCoordinator::Store(absl::string_view stream, absl::string_view group,
                                     GroupRecord record) {
  record.epoch = replayer_.epoch();
  return store_.Put(GroupKey(stream, group), record.Encode());
}

Cursor GroupCoordinator::CursorAt(absl::string_view stream, uint64_t sequence) const {
  return Cursor::For(stream, replayer_.epoch(), sequence);
}

absl::StatusOr<ReplayPage> GroupCoordinator::ReadPage(const ConsumeRequest& request, uint64_t& from,
                                                      std::optional<RetentionGap>& gap) {
  ReplayRequest replay;
  replay.stream = request.stream;
  replay.limit = request.limit;
  replay.after = Position::After(CursorAt(request.stream, from));
  absl::StatusOr<ReplayPage> page = replayer_.Replay(replay);
  std::optional<RetentionGap> trimmed = GetRetentionGap(page.status());
  if (!trimmed) return page;
  // Retention overtook the group: start at the oldest event retained.
  gap = RetentionGap{from, trimmed->oldest};
  from = trimmed->oldest - 1;
  replay.after = Position::After(CursorAt(request.stream, from));
  return replayer_.Replay(replay);
}

absl::StatusOr<ConsumePage> GroupCoordinator::Consume(const ConsumeRequest& request) {
  KEEL_RETURN_IF_ERROR(ValidateConsume(request));
  MutexLock lock(&GroupMutex(request.stream, request.group));
  KEEL_ASSIGN_OR_RETURN(std::optional<GroupRecord> loaded, Load(request.stream, request.group));
  const absl::Time now = clock_.Now();
  ConsumePage page;
  // A member polling a leased group costs one record read, no stream read.
  if (loaded && loaded->LeaseLive(now)) {
    page.busy_until = loaded->lease_expires;
    return page;
  }
  GroupRecord record;
  if (loaded) {
    record = *loaded;
  } else {
    KEEL_ASSIGN_OR_RETURN(StreamInfo info, replayer_.Bounds(request.stream));
    record = NewRecord(request.start, info);
  }
  uint64_t from = record.committed;
  KEEL_ASSIGN_OR_RETURN(ReplayPage read, ReadPage(request, from, page.gap));
  if (read.events.empty()) {
    // Remember where a new group starts, so `latest` means "when first seen".
    if (!loaded) KEEL_RETURN_IF_ERROR(Store(request.stream, request.group, record));
    return page;
  }
  record.lease_token = ++record.last_token;
  record.lease_expires = now + request.lease;
  record.lease_from = from;
  record.lease_to = read.events.back().sequence;
  KEEL_RETURN_IF_ERROR(Store(request.stream, request.group, record));
  page.lease = GroupLease{record.lease_token, record.lease_expires, CursorAt(request.stream, from),
                          CursorAt(request.stream, record.lease_to)};
  page.events = std::move(read.events);
  return page;
}

absl::Status GroupCoordinator::CheckCommit(absl::string_view stream, const GroupRecord& record,
                                           const Cursor& cursor, uint64_t token) const {
  if (token != record.last_token) {
    return ConflictError(token < record.last_token
                             ? absl::StrCat("lease token ", token, " of stream '", stream,
                                            "' was superseded by token ", record.last_token)
                             : absl::StrCat("lease token ", token, " was never granted"),
                         ConflictInfo{record.last_token, token});
  }
  if (!record.HasLease()) {
    // Already committed with this token: repeating that commit (a retry
    // whose answer was lost) changes nothing; going further is refused.
    if (cursor.sequence <= record.committed) return absl::OkStatus();
    return ConflictError(absl::StrCat("lease token ", token, " already ended"),
                         ConflictInfo{record.last_token, token});
  }
  if (cursor.sequence < record.lease_from || cursor.sequence > record.lease_to) {
    return InvalidArgument(absl::StrCat("cursor at sequence ", cursor.sequence,
                                        " is outside the leased page (", record.lease_from, " to ",
                                        record.lease_to, ")"));
  }
  return absl::OkStatus();
}

absl::Status GroupCoordinator::Commit(absl::string_view stream, absl::string_view group,
                                      const Cursor& cursor, uint64_t token) {
  KEEL_RETURN_IF_ERROR(ValidateNames(stream, group));
  if (cursor.epoch == replayer_.epoch()) {
    KEEL_RETURN_IF_ERROR(cursor.CheckBelongsTo(stream, replayer_.epoch()));
  } else {  // Perhaps a cursor of an earlier epoch of the store.
    KEEL_ASSIGN_OR_RETURN(StreamInfo info, replayer_.Bounds(stream));
    KEEL_RETURN_IF_ERROR(CheckCursorFor(cursor, info, replayer_.epoch()));
  }
  MutexLock lock(&GroupMutex(stream, group));
  KEEL_ASSIGN_OR_RETURN(std::optional<GroupRecord> loaded, Load(stream, group));
  if (!loaded) {
    return NotFound(absl::StrCat("group '", group, "' of stream '", stream, "' does not exist"));
  }
  GroupRecord record = *loaded;
  KEEL_RETURN_IF_ERROR(CheckCommit(stream, record, cursor, token));
  if (!record.HasLease()) return absl::OkStatus();  // A repeated commit.
  record.committed = std::max(record.committed, cursor.sequence);
  record.EndLease();
  return Store(stream, group, record);
}

absl::Status GroupCoordinator::Seek(absl::string_view stream, absl::string_view group,
                                    const Position& at) {
  KEEL_RETURN_IF_ERROR(ValidateNames(stream, group));
  MutexLock lock(&GroupMutex(stream, group));
  KEEL_ASSIGN_OR_RETURN(std::optional<GroupRecord> loaded, Load(stream, group));
  KEEL_ASSIGN_OR_RETURN(StreamInfo info, replayer_.Bounds(stream));
  KEEL_ASSIGN_OR_RETURN(uint64_t sequence, ResolvePosition(at, info, replayer_.epoch()));
  GroupRecord record = loaded.value_or(GroupRecord{});
  record.committed = sequence;
  // Fence the outstanding lease: its holder's token is now superseded.
  ++record.last_token;
  record.EndLease();
  return Store(stream, group, record);
}

absl::Status GroupCoordinator::SeekToTime(absl::string_view stream, absl::string_view group,
                                          absl::Time time) {
  KEEL_RETURN_IF_ERROR(ValidateNames(stream, group));
  KEEL_ASSIGN_OR_RETURN(Position at, PositionAtTime(replayer_, stream, time));
  return Seek(stream, group, at);
}

GroupInfo GroupCoordinator::InfoOf(absl::string_view stream, absl::string_view group,
                                   const GroupRecord& record, const StreamInfo& info) const {
  GroupInfo out;
  out.stream = std::string(stream);
  out.group = std::string(group);
  out.cursor = CursorAt(stream, record.committed);
  const uint64_t read_through = std::max(record.committed, info.first_sequence - 1);
  out.lag = info.last_sequence > read_through ? info.last_sequence - read_through : 0;
  out.last_token = record.last_token;
  if (record.LeaseLive(clock_.Now())) {
    out.lease = GroupLease{record.lease_token, record.lease_expires,
                           CursorAt(stream, record.lease_from), CursorAt(stream, record.lease_to)};
  }
  return out;
}

absl::StatusOr<GroupInfo> GroupCoordinator::Describe(absl::string_view stream,
                                                     absl::string_view group) {
  KEEL_RETURN_IF_ERROR(ValidateNames(stream, group));
  KEEL_ASSIGN_OR_RETURN(std::optional<GroupRecord> record, Load(stream, group));
  if (!record) {
    return NotFound(absl::StrCat("group '", group, "' of stream '", stream, "' does not exist"));
  }
  KEEL_ASSIGN_OR_RETURN(StreamInfo info, replayer_.Bounds(stream));
  return InfoOf(stream, group, *record, info);
}

absl::StatusOr<std::vector<GroupInfo>> GroupCoordinator::List(absl::string_view stream) {
  if (!stream.empty()) KEEL_RETURN_IF_ERROR(ValidateStreamName(stream));
  KEEL_ASSIGN_OR_RETURN(std::vector<MetadataStore::Record> records,
                        store_.List(GroupKey(stream, "")));
  std::vector<GroupInfo> out;
  std::map<std::string, StreamInfo, std::less<>> bounds;
  for (const auto& [key, value] : records) {
    std::string group_stream, group;
    if (!ParseGroupKey(key, &group_stream, &group)) continue;
    absl::StatusOr<GroupRecord> record = GroupRecord::Decode(value);
    if (!record.ok()) {
      return absl::DataLossError(absl::StrCat("'", key, "': ", record.status().message()));
    }
    auto it = bounds.find(group_stream);
    if (it == bounds.end()) {
      KEEL_ASSIGN_OR_RETURN(StreamInfo info, replayer_.Bounds(group_stream));
      it = bounds.emplace(group_stream, std::move(info)).first;
    }
    out.push_back(InfoOf(group_stream, group,
                         InCurrentEpoch(*record, it->second, replayer_.epoch()), it->second));
  }
  std::sort(out.begin(), out.end(), [](const GroupInfo& a, const GroupInfo& b) {
    return std::tie(a.stream, a.group) < std::tie(b.stream, b.group);
  });
  return out;
}

}  // namespace keel
