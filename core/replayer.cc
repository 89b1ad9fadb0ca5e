#include "keel/core/replayer.h"

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"
#include "keel/core/publish_validation.h"
#include "keel/core/status_macros.h"

namespace keel {

bool EventFilter::Matches(const Event& event) const {
  if (!tenant.empty() && event.tenant != tenant) return false;
  return type_prefix.empty() || absl::StartsWith(event.type, type_prefix);
}

const EarlierEpoch* EarlierEpochOf(const StreamInfo& info, uint64_t epoch) {
  auto it = absl::c_find_if(
      info.earlier_epochs, [epoch](const EarlierEpoch& earlier) { return earlier.epoch == epoch; });
  return it == info.earlier_epochs.end() ? nullptr : &*it;
}

namespace {

// The cursor's stream and epoch (an earlier epoch's cursor only where its
// event survived).
absl::Status CheckEpochOf(const Cursor& cursor, const StreamInfo& info, uint64_t epoch) {
  // Entry 0 stands for forgotten epochs; no cursor carries epoch 0.
  const EarlierEpoch* earlier =
      cursor.epoch == epoch || cursor.epoch == 0 ? nullptr : EarlierEpochOf(info, cursor.epoch);
  if (earlier == nullptr) return cursor.CheckBelongsTo(info.stream, epoch);
  KEEL_RETURN_IF_ERROR(cursor.CheckBelongsTo(info.stream, earlier->epoch));
  if (cursor.sequence < earlier->valid_below) return absl::OkStatus();
  const uint64_t kept = earlier->valid_below - 1;
  return CursorMismatch(absl::StrCat(
      "cursor at sequence ", cursor.sequence, " of stream '", info.stream,
      "' names an event that an unsynced crash lost (store epoch ", cursor.epoch,
      "); its sequence was given again to another event. ",
      kept == 0 ? "None of the stream's events before it were kept: resume from earliest"
                : absl::StrCat("The events up to sequence ", kept, " were kept: resume after ",
                               Cursor::For(info.stream, epoch, kept).Encode())));
}

}  // namespace

absl::Status CheckCursorFor(const Cursor& cursor, const StreamInfo& info, uint64_t epoch) {
  KEEL_RETURN_IF_ERROR(CheckEpochOf(cursor, info, epoch));
  if (cursor.sequence >= info.incarnation_start) return absl::OkStatus();
  return CursorMismatch(absl::StrCat("cursor at sequence ", cursor.sequence, " names stream '",
                                     info.stream,
                                     "' from before it was deleted; the stream of that name now "
                                     "is a new one, from sequence ",
                                     info.incarnation_start + 1, ": resume from earliest"));
}

absl::StatusOr<uint64_t> ResolvePosition(const Position& position, const StreamInfo& info,
                                         uint64_t epoch) {
  switch (position.kind) {
    case Position::Kind::kEarliest:
      return info.first_sequence - 1;
    case Position::Kind::kLatest:
      return info.last_sequence;
    case Position::Kind::kCursor:
      break;
  }
  const Cursor& cursor = position.cursor;
  KEEL_RETURN_IF_ERROR(CheckCursorFor(cursor, info, epoch));
  if (cursor.sequence > info.last_sequence) {
    return CursorMismatch(absl::StrCat("cursor at sequence ", cursor.sequence,
                                       " is ahead of stream '", info.stream, "' (head ",
                                       info.last_sequence, ")"));
  }
  if (cursor.sequence + 1 < info.first_sequence) {
    return RetentionGapError(info.stream, RetentionGap{cursor.sequence, info.first_sequence});
  }
  return cursor.sequence;
}

absl::StatusOr<Cursor> CursorAtSequence(Replayer& replayer, absl::string_view stream,
                                        uint64_t sequence) {
  KEEL_RETURN_IF_ERROR(ValidateStreamName(stream));
  KEEL_ASSIGN_OR_RETURN(StreamInfo info, replayer.Bounds(stream));
  const Cursor cursor = Cursor::For(stream, replayer.epoch(), sequence);
  KEEL_RETURN_IF_ERROR(ResolvePosition(Position::After(cursor), info, replayer.epoch()).status());
  return cursor;
}

absl::Status ValidateReplayRequest(const ReplayRequest& request) {
  KEEL_RETURN_IF_ERROR(ValidateStreamName(request.stream));
  if (request.limit == 0 || request.limit > kMaxReplayLimit) {
    return InvalidArgument(
        absl::StrCat("limit must be between 1 and ", kMaxReplayLimit, "; got ", request.limit));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> ResolveUntil(const ReplayRequest& request, const StreamInfo& info,
                                      uint64_t epoch) {
  if (!request.until) return info.last_sequence;
  KEEL_RETURN_IF_ERROR(CheckCursorFor(*request.until, info, epoch));
  return std::min(request.until->sequence, info.last_sequence);
}

namespace {

// Publish time of event `sequence` (which must be retained).
absl::StatusOr<absl::Time> TimeOf(Replayer& replayer, absl::string_view stream, uint64_t sequence) {
  ReplayRequest request;
  request.stream = std::string(stream);
  request.after = Position::After(Cursor::For(stream, replayer.epoch(), sequence - 1));
  request.limit = 1;
  KEEL_ASSIGN_OR_RETURN(ReplayPage page, replayer.Replay(request));
  if (page.events.empty()) {
    return absl::InternalError(absl::StrCat("stream '", stream, "' has no event ", sequence));
  }
  return page.events.front().time;
}

}  // namespace

absl::StatusOr<Position> PositionAtTime(Replayer& replayer, absl::string_view stream,
                                        absl::Time time) {
  KEEL_ASSIGN_OR_RETURN(StreamInfo info, replayer.Bounds(stream));
  // Find the first retained sequence whose time is >= `time` in [lo, hi).
  uint64_t lo = info.first_sequence;
  uint64_t hi = info.last_sequence + 1;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    KEEL_ASSIGN_OR_RETURN(absl::Time at, TimeOf(replayer, stream, mid));
    if (at < time) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo > info.last_sequence) return Position::After(info.head);
  if (lo == info.first_sequence) return Position::Earliest();
  return Position::After(Cursor::For(stream, replayer.epoch(), lo - 1));
}

absl::StatusOr<Cursor> LatestCursor(Replayer& replayer, absl::string_view stream,
                                    absl::string_view tenant) {
  (void)tenant;  // Any tenant's watermark is the head; see the header.
  KEEL_ASSIGN_OR_RETURN(StreamInfo info, replayer.Bounds(stream));
  return info.head;
}

}  // namespace keel
