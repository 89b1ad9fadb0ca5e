#include "keel/core/errors.h"

#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace keel {
namespace {

// The payload is "<kind name>[;<detail>...]" under this type URL.
constexpr char kKindUrl[] = "type.keel.dev/keel.error";
constexpr char kOutcomeUnknown[] = "outcome_unknown";

struct KindInfo {
  ErrorKind kind;
  absl::string_view name;
  absl::StatusCode code;
};

constexpr KindInfo kKinds[] = {
    {ErrorKind::kInvalidArgument, "invalid_argument", absl::StatusCode::kInvalidArgument},
    {ErrorKind::kInvalidCursor, "invalid_cursor", absl::StatusCode::kInvalidArgument},
    {ErrorKind::kRetentionGap, "retention_gap", absl::StatusCode::kOutOfRange},
    {ErrorKind::kCursorMismatch, "cursor_mismatch", absl::StatusCode::kFailedPrecondition},
    {ErrorKind::kPayloadTooLarge, "payload_too_large", absl::StatusCode::kResourceExhausted},
    {ErrorKind::kConflict, "conflict", absl::StatusCode::kAborted},
    {ErrorKind::kResourceDrift, "resource_drift", absl::StatusCode::kFailedPrecondition},
    {ErrorKind::kUnavailable, "unavailable", absl::StatusCode::kUnavailable},
    {ErrorKind::kClosed, "closed", absl::StatusCode::kCancelled},
    {ErrorKind::kNotFound, "not_found", absl::StatusCode::kNotFound},
    {ErrorKind::kSlowConsumer, "slow_consumer", absl::StatusCode::kResourceExhausted},
};

const KindInfo* Find(ErrorKind kind) {
  for (const auto& info : kKinds) {
    if (info.kind == kind) return &info;
  }
  return nullptr;
}

std::vector<std::string> PayloadFields(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kKindUrl);
  if (!payload) return {};
  return absl::StrSplit(std::string(*payload), ';');
}

absl::Status WithDetails(ErrorKind kind, absl::string_view message, uint64_t a, uint64_t b) {
  absl::Status status = MakeError(kind, message);
  status.SetPayload(kKindUrl, absl::Cord(absl::StrCat(ErrorKindName(kind), ";", a, ";", b)));
  return status;
}

// Reads the two numeric details written by WithDetails for `kind`.
std::optional<std::pair<uint64_t, uint64_t>> Details(const absl::Status& status, ErrorKind kind) {
  std::vector<std::string> fields = PayloadFields(status);
  if (fields.size() != 3 || fields[0] != ErrorKindName(kind)) return std::nullopt;
  uint64_t a = 0, b = 0;
  if (!absl::SimpleAtoi(fields[1], &a) || !absl::SimpleAtoi(fields[2], &b)) return std::nullopt;
  return std::make_pair(a, b);
}

}  // namespace

absl::string_view ErrorKindName(ErrorKind kind) {
  if (kind == ErrorKind::kNone) return "ok";
  const KindInfo* info = Find(kind);
  return info != nullptr ? info->name : "other";
}

ErrorKind GetErrorKind(const absl::Status& status) {
  if (status.ok()) return ErrorKind::kNone;
  std::vector<std::string> fields = PayloadFields(status);
  if (fields.empty()) return ErrorKind::kOther;
  for (const auto& info : kKinds) {
    if (info.name == fields[0]) return info.kind;
  }
  return ErrorKind::kOther;
}

absl::Status MakeError(ErrorKind kind, absl::string_view message) {
  const KindInfo* info = Find(kind);
  if (info == nullptr) return absl::UnknownError(message);
  absl::Status status(info->code, message);
  status.SetPayload(kKindUrl, absl::Cord(info->name));
  return status;
}

absl::Status RetentionGapError(absl::string_view stream, const RetentionGap& gap) {
  return WithDetails(ErrorKind::kRetentionGap,
                     absl::StrCat("stream '", stream, "': events after sequence ",
                                  gap.requested_after, " are no longer retained; oldest is ",
                                  gap.oldest),
                     gap.requested_after, gap.oldest);
}

std::optional<RetentionGap> GetRetentionGap(const absl::Status& status) {
  auto details = Details(status, ErrorKind::kRetentionGap);
  if (!details) return std::nullopt;
  return RetentionGap{details->first, details->second};
}

absl::Status ConflictError(absl::string_view message, const ConflictInfo& info) {
  return WithDetails(ErrorKind::kConflict, message, info.expected, info.actual);
}

std::optional<ConflictInfo> GetConflict(const absl::Status& status) {
  auto details = Details(status, ErrorKind::kConflict);
  if (!details) return std::nullopt;
  return ConflictInfo{details->first, details->second};
}

absl::Status OutcomeUnknownError(absl::string_view message) {
  absl::Status status = MakeError(ErrorKind::kUnavailable, message);
  status.SetPayload(kKindUrl, absl::Cord(absl::StrCat(ErrorKindName(ErrorKind::kUnavailable), ";",
                                                      kOutcomeUnknown)));
  return status;
}

bool IsOutcomeUnknown(const absl::Status& status) {
  const std::vector<std::string> fields = PayloadFields(status);
  return fields.size() == 2 && fields[0] == ErrorKindName(ErrorKind::kUnavailable) &&
         fields[1] == kOutcomeUnknown;
}

absl::Status ExceptionStatus(const std::exception& e) {
  return absl::InternalError(absl::StrCat("unexpected exception: ", e.what()));
}

}  // namespace keel
