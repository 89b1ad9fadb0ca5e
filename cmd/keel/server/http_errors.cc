#include "keel/cmd/keel/server/http_errors.h"

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/grant_filters.h"
#include "keel/cmd/keel/server/json_codec.h"
#include "keel/core/cursor.h"
#include "keel/core/errors.h"

namespace keel::server {

HttpErrorCode ToHttpErrorCode(const absl::Status& status) {
  switch (GetErrorKind(status)) {
    case ErrorKind::kNone:
      return {200, "ok"};
    case ErrorKind::kInvalidArgument:
      return {400, "invalid_argument"};
    case ErrorKind::kInvalidCursor:
      return {400, "invalid_cursor"};
    case ErrorKind::kNotFound:
      return {404, "not_found"};
    case ErrorKind::kCursorMismatch:
      return {409, "cursor_mismatch"};
    case ErrorKind::kConflict:
      return {409, "conflict"};
    case ErrorKind::kResourceDrift:
      return {409, "resource_drift"};
    case ErrorKind::kRetentionGap:
      return {410, "retention_gap"};
    case ErrorKind::kPayloadTooLarge:
      return {413, "payload_too_large"};
    case ErrorKind::kUnavailable:
    case ErrorKind::kClosed:
      return {503, "unavailable"};
    case ErrorKind::kSlowConsumer:
    case ErrorKind::kOther:
      break;
  }
  if (status.code() == absl::StatusCode::kUnavailable) return {503, "unavailable"};
  if (status.code() == absl::StatusCode::kPermissionDenied) return {403, "permission_denied"};
  if (status.code() == absl::StatusCode::kUnimplemented) return {501, "unimplemented"};
  return {500, "internal"};
}

HttpResponse ErrorResponse(int status, absl::string_view code, absl::string_view message,
                           absl::string_view details) {
  HttpResponse response;
  response.status = status;
  response.body = absl::StrCat("{\"error\":{\"code\":", JsonString(code),
                               ",\"message\":", JsonString(message),
                               details.empty() ? "" : ",", details, "}}");
  return response;
}

HttpResponse ErrorResponse(const absl::Status& status, absl::string_view details) {
  HttpErrorCode mapped = ToHttpErrorCode(status);
  if (details.empty() && mapped.status == 403) {
    return ErrorResponse(mapped.status, mapped.code, status.message(), ScopeDeniedDetails(status));
  }
  return ErrorResponse(mapped.status, mapped.code, status.message(), details);
}

HttpResponse ErrorResponseWithDetails(const absl::Status& status, absl::string_view stream,
                                      uint64_t epoch) {
  std::string details;
  if (std::optional<RetentionGap> gap = GetRetentionGap(status)) {
    details = absl::StrCat("\"requested\":\"",
                           Cursor::For(stream, epoch, gap->requested_after).Encode(),
                           "\",\"oldest\":\"", Cursor::For(stream, epoch, gap->oldest).Encode(),
                           "\",\"resume\":\"", Cursor::For(stream, epoch, gap->oldest - 1).Encode(),
                           "\",\"oldestSequence\":", gap->oldest, ",\"missed\":", gap->missed());
  } else if (std::optional<ConflictInfo> conflict = GetConflict(status)) {
    details = absl::StrCat("\"expected\":", conflict->expected, ",\"actual\":", conflict->actual);
  } else if (IsOutcomeUnknown(status)) {
    details = "\"outcome\":\"unknown\"";
  }
  return ErrorResponse(status, details);
}

}  // namespace keel::server
