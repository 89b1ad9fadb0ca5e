#include "core/replayer.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "core/publish_validation.h"
#include "core/status_macros.h"

namespace keel {

bool EventFilter::Matches(const Event& event) const {
  if (!tenant.empty() && event.tenant != tenant) return false;
  return type_prefix.empty() || absl::StartsWith(event.type, type_prefix);
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
  KEEL_RETURN_IF_ERROR(cursor.CheckBelongsTo(info.stream, epoch));
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

absl::Status ValidateReplayRequest(const ReplayRequest& request) {
  KEEL_RETURN_IF_ERROR(ValidateStreamName(request.stream));
  if (request.limit == 0 || request.limit > kMaxReplayLimit) {
    return InvalidArgument(absl::StrCat("limit must be between 1 and ", kMaxReplayLimit, "; got ",
                                        request.limit));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> ResolveUntil(const ReplayRequest& request, const StreamInfo& info,
                                      uint64_t epoch) {
  if (!request.until) return info.last_sequence;
  KEEL_RETURN_IF_ERROR(request.until->CheckBelongsTo(info.stream, epoch));
  return std::min(request.until->sequence, info.last_sequence);
}

}  // namespace keel
