// Validation and preparation of events on the publish path, shared by every
// driver so that all drivers accept and reject exactly the same input.
//
// PrepareForPublish checks names, sizes and fields, rejects a preset
// sequence, then fills stream, id and time and applies the Redactor. It runs
// before a driver assigns sequences, so a rejected event consumes nothing.
//
// Thread safety: pure functions (ids come from a thread-safe generator).
#ifndef KEEL_CORE_PUBLISH_VALIDATION_H_
#define KEEL_CORE_PUBLISH_VALIDATION_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "keel/core/clock.h"
#include "keel/core/event.h"
#include "keel/core/redactor.h"

namespace keel {

struct PublishLimits {
  size_t max_event_bytes = 128 * 1024;  // Event::ApproximateSize, envelope included.
  size_t max_batch_events = 10'000;
  size_t max_batch_bytes = 16 * 1024 * 1024;
};

inline constexpr size_t kMaxNameLength = 255;

// Stream names: [A-Za-z0-9._:-]{1,255}.
absl::Status ValidateStreamName(absl::string_view stream);

// A new time-ordered unique id (UUIDv7 layout, lowercase hex).
std::string NewEventId(absl::Time now);

// Validates and fills `events` for a publish to `stream` (an event's own
// stream must be empty or equal). kInvalidArgument / kPayloadTooLarge name
// the offending event index and field.
absl::Status PrepareForPublish(absl::string_view stream, absl::Span<Event> events,
                               const Clock& clock, const Redactor* redactor,
                               const PublishLimits& limits);
inline absl::Status PrepareForPublish(absl::string_view stream, std::vector<Event>& events,
                                      const Clock& clock, const Redactor* redactor,
                                      const PublishLimits& limits) {
  return PrepareForPublish(stream, absl::MakeSpan(events), clock, redactor, limits);
}

}  // namespace keel

#endif  // KEEL_CORE_PUBLISH_VALIDATION_H_
