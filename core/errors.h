// Typed errors for Keel.
//
// Every fallible Keel call returns absl::Status / absl::StatusOr. Errors that a
// caller may want to branch on carry a Keel payload naming their kind (and, for
// some kinds, structured details) so that a program never has to parse
// messages: `GetErrorKind(status) == ErrorKind::kRetentionGap`.
//
// Each kind also maps to one canonical absl code, so code that only looks at
// `status.code()` still sees a sensible category. The HTTP layer maps kinds to
// status codes and JSON error codes (rfcs/0004-http-api.md).
//
// Thread safety: all functions are pure and safe to call concurrently.
#ifndef KEEL_CORE_ERRORS_H_
#define KEEL_CORE_ERRORS_H_

#include <cstdint>
#include <exception>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace keel {

enum class ErrorKind {
  kNone,             // OK status.
  kOther,            // An error without a Keel kind (I/O, internal, ...).
  kInvalidArgument,  // Bad name, size, field, option. absl: InvalidArgument.
  kInvalidCursor,    // A cursor token that does not decode. absl: InvalidArgument.
  kRetentionGap,     // Reading below the oldest retained event. absl: OutOfRange.
  kCursorMismatch,   // Cursor of another stream or store epoch. absl: FailedPrecondition.
  kPayloadTooLarge,  // Event or batch over a size limit. absl: ResourceExhausted.
  kConflict,         // Optimistic-concurrency or fencing conflict. absl: Aborted.
  kResourceDrift,    // A re-declaration differs from what exists. absl: FailedPrecondition.
  kUnavailable,      // Backend not reachable or overloaded. absl: Unavailable.
  kClosed,           // The bus or subscription was closed. absl: Cancelled.
  kNotFound,         // No such stream, driver or resource. absl: NotFound.
  kSlowConsumer,     // A subscriber overflowed with the disconnect policy. absl: ResourceExhausted.
};

absl::string_view ErrorKindName(ErrorKind kind);

// Returns the kind of `status`: kNone for OK, the Keel kind when the payload is
// present, kOther otherwise.
ErrorKind GetErrorKind(const absl::Status& status);

// Builds a status of `kind` with its canonical absl code and `message`.
absl::Status MakeError(ErrorKind kind, absl::string_view message);

// Details of a retention gap: the caller asked for events after `requested`
// but the oldest retained event has sequence `oldest`.
struct RetentionGap {
  uint64_t requested_after = 0;  // Sequence the reader's cursor points at.
  uint64_t oldest = 0;           // First retained sequence.
  uint64_t missed() const { return oldest - requested_after - 1; }
};

absl::Status RetentionGapError(absl::string_view stream, const RetentionGap& gap);
std::optional<RetentionGap> GetRetentionGap(const absl::Status& status);

// Details of an optimistic-concurrency conflict.
struct ConflictInfo {
  uint64_t expected = 0;
  uint64_t actual = 0;
};
absl::Status ConflictError(absl::string_view message, const ConflictInfo& info);
std::optional<ConflictInfo> GetConflict(const absl::Status& status);

// An append whose outcome the engine left unknown for longer than the
// driver waits (a remote engine without quorum): its events may or may not
// be stored. Kind kUnavailable. Republishing them with the same
// idempotency keys tells which: a stored one answers as a duplicate with
// its sequence.
absl::Status OutcomeUnknownError(absl::string_view message);
bool IsOutcomeUnknown(const absl::Status& status);

inline absl::Status InvalidArgument(absl::string_view m) {
  return MakeError(ErrorKind::kInvalidArgument, m);
}
inline absl::Status InvalidCursor(absl::string_view m) {
  return MakeError(ErrorKind::kInvalidCursor, m);
}
inline absl::Status CursorMismatch(absl::string_view m) {
  return MakeError(ErrorKind::kCursorMismatch, m);
}
inline absl::Status PayloadTooLarge(absl::string_view m) {
  return MakeError(ErrorKind::kPayloadTooLarge, m);
}
inline absl::Status ResourceDrift(absl::string_view m) {
  return MakeError(ErrorKind::kResourceDrift, m);
}
inline absl::Status Unavailable(absl::string_view m) {
  return MakeError(ErrorKind::kUnavailable, m);
}
inline absl::Status Closed(absl::string_view m) { return MakeError(ErrorKind::kClosed, m); }
inline absl::Status NotFound(absl::string_view m) { return MakeError(ErrorKind::kNotFound, m); }

// The status for an exception caught where Keel calls code it does not own
// (a host's driver): an internal error with its message. Exceptions do not
// cross module boundaries; the callers that catch them say where and why.
absl::Status ExceptionStatus(const std::exception& e);

}  // namespace keel

#endif  // KEEL_CORE_ERRORS_H_
