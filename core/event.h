// Event: the unit Keel stores and delivers.
//
// A publisher fills `stream`, `type`, `payload` and optionally the other
// fields; the bus assigns `sequence` (gap-free per stream, starting at 1),
// `id` (when empty) and `time` (from the bus's Clock). A publisher that sets
// `sequence` is rejected: ordering is the bus's job.
//
// The stored and wire form is the protobuf envelope keel.v1.Event
// (core/proto/event.proto); see core/event_codec.h.
//
// Thread safety: a plain value type.
#ifndef KEEL_CORE_EVENT_H_
#define KEEL_CORE_EVENT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/time/time.h"

namespace keel {

struct Event {
  std::string stream;
  uint64_t sequence = 0;  // Assigned by the bus; 0 until published.
  std::string id;         // Unique id; assigned by the bus when empty.
  std::string type;       // e.g. "order.created"; required.
  std::string tenant;     // Optional; readers may filter on it.
  absl::Time time = absl::InfinitePast();  // Publish time, assigned by the bus.
  std::string payload;                     // Opaque bytes.
  std::string content_type;                // e.g. "application/json".
  std::map<std::string, std::string> attributes;
  std::optional<std::string> idempotency_key;

  // Bytes this event accounts for in size limits and retention: payload,
  // strings and attributes (not the envelope's framing).
  uint64_t ApproximateSize() const;

  friend bool operator==(const Event&, const Event&) = default;
};

}  // namespace keel

#endif  // KEEL_CORE_EVENT_H_
