// Dead letters: events a consumer group gave up on, kept on the source
// stream's dead-letter stream "<stream>.dlq" (DeadLetterStream in
// core/policy_registry.h) and retained by its policy's dead_letter_retention.
//
// A dead letter is the original event (type, payload, tenant, content type,
// attributes) with these attributes added:
//
//   keel.dlq.source_stream    the stream the event was consumed from
//   keel.dlq.source_sequence  its sequence there
//   keel.dlq.source_id        its id
//   keel.dlq.source_time      its publish time (RFC 3339, UTC, nanoseconds)
//   keel.dlq.group            the consumer group that gave up
//   keel.dlq.reason           the handler's last error message
//   keel.dlq.attempts         how many times the handler was called
//
// MakeDeadLetter builds one with an idempotency key derived from (source
// stream, group, sequence), so a consumer that dead-letters an event, crashes
// before committing and dead-letters it again after redelivery appends
// nothing the second time (within the stream's dedupe window). Republish
// puts the original event back on its source stream without the keel.dlq.*
// attributes, marked `keel.republished_from` = the dead letter's cursor,
// with an idempotency key derived from the dead letter: republishing twice
// appends once.
//
// Thread safety: free functions over a thread-safe bus.
#ifndef KEEL_CORE_DEAD_LETTERS_H_
#define KEEL_CORE_DEAD_LETTERS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/core/cursor.h"
#include "keel/core/event.h"
#include "keel/core/event_bus.h"

namespace keel {

inline constexpr char kDlqSourceStream[] = "keel.dlq.source_stream";
inline constexpr char kDlqSourceSequence[] = "keel.dlq.source_sequence";
inline constexpr char kDlqSourceId[] = "keel.dlq.source_id";
inline constexpr char kDlqSourceTime[] = "keel.dlq.source_time";
inline constexpr char kDlqGroup[] = "keel.dlq.group";
inline constexpr char kDlqReason[] = "keel.dlq.reason";
inline constexpr char kDlqAttempts[] = "keel.dlq.attempts";
inline constexpr char kRepublishedFrom[] = "keel.republished_from";
// Longer handler messages are cut to this many bytes.
inline constexpr size_t kMaxDlqReasonBytes = 1024;

struct DeadLetter {
  Event event;     // As stored on the dead-letter stream (keel.dlq.* included).
  Cursor cursor;   // Its position on the dead-letter stream.
  std::string source_stream;
  uint64_t source_sequence = 0;
  std::string source_id;
  std::string group;
  std::string reason;
  uint64_t attempts = 0;
};

struct DeadLetterPage {
  std::vector<DeadLetter> letters;
  Cursor next;               // Pass back as `after` to continue.
  bool reached_end = false;
};

// The dead letter of `event` (consumed from its stream by `group`), ready to
// publish to DeadLetterStream(event.stream).
Event MakeDeadLetter(const Event& event, absl::string_view group, absl::string_view reason,
                     uint64_t attempts);

// Decodes a dead-letter event; kInvalidArgument when it lacks the keel.dlq.*
// attributes.
absl::StatusOr<DeadLetter> DecodeDeadLetter(Event event, uint64_t epoch);

// Dead letters of `stream` after `after` (a position on its dead-letter
// stream), at most `limit`.
absl::StatusOr<DeadLetterPage> ListDeadLetters(EventBus& bus, absl::string_view stream,
                                               const Position& after, size_t limit);

// The event `letter` was made from, as its source stream holds it: stream,
// sequence, id and publish time restored (the time is the dead letter's own
// for letters made before the source time was kept), the keel.dlq.*
// attributes dropped.
Event OriginalEvent(const DeadLetter& letter);

// The dead letter at `sequence` of `stream`'s dead-letter stream; kNotFound
// when there is none.
absl::StatusOr<DeadLetter> GetDeadLetter(EventBus& bus, absl::string_view stream,
                                         uint64_t sequence);

// Publishes the original event of dead letter `sequence` back onto `stream`.
// The receipt has `duplicate` set when it was republished before.
absl::StatusOr<Receipt> Republish(EventBus& bus, absl::string_view stream, uint64_t sequence);

}  // namespace keel

#endif  // KEEL_CORE_DEAD_LETTERS_H_
