// Encoding of an Event as its protobuf envelope (keel.v1.Event), the form in
// which durable drivers store events and daemons exchange them.
//
// Thread safety: pure functions.
#ifndef KEEL_CORE_EVENT_CODEC_H_
#define KEEL_CORE_EVENT_CODEC_H_

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "keel/core/event.h"

namespace keel {

std::string EncodeEvent(const Event& event);
// Appends the encoding to `out` (no allocation when `out` has room).
void AppendEncodedEvent(const Event& event, std::string& out);
// Appends the envelope without `stream` and `sequence`, for stores whose keys
// already carry both; DecodeEvent then leaves them empty/0.
void AppendEncodedEventBody(const Event& event, std::string& out);
// kDataLoss (absl) when `bytes` is not a valid envelope.
absl::StatusOr<Event> DecodeEvent(absl::string_view bytes);
// The same into `event`, which must be default-constructed (readers that
// fill a vector in place save moving every event).
absl::Status DecodeEventInto(absl::string_view bytes, Event& event);

}  // namespace keel

#endif  // KEEL_CORE_EVENT_CODEC_H_
