// Internal: the fields of an event in a publish body, by name. One list for
// the general parser (publish_body.cc) and the plain-event path
// (plain_event.cc), so that a field is added or renamed in one place.
//
// Thread safety: pure functions.
#ifndef KEEL_CMD_KEEL_SERVER_EVENT_FIELDS_H_
#define KEEL_CMD_KEEL_SERVER_EVENT_FIELDS_H_

#include <cstddef>
#include <optional>

#include "absl/strings/string_view.h"

namespace keel::server {

enum class EventField {
  kType,
  kData,
  kDataBase64,
  kContentType,
  kTenant,
  kAttributes,
  kIdempotencyKey,
  kId,
  kPartitionKey,
  kExpectedLastSequence,
};
inline constexpr size_t kEventFieldCount = 10;
static_assert(static_cast<size_t>(EventField::kExpectedLastSequence) + 1 == kEventFieldCount);

// The fields' names as the HTTP API spells them, in EventField's order.
inline constexpr absl::string_view kEventFieldNames[kEventFieldCount] = {
    "type",       "data",           "dataBase64", "contentType",  "tenant",
    "attributes", "idempotencyKey", "id",         "partitionKey", "expectedLastSequence",
};

inline absl::string_view EventFieldName(EventField field) {
  return kEventFieldNames[static_cast<size_t>(field)];
}

// The field named `name`; nullopt when unknown.
inline std::optional<EventField> EventFieldNamed(absl::string_view name) {
  for (size_t i = 0; i < kEventFieldCount; ++i) {
    if (name == kEventFieldNames[i]) return static_cast<EventField>(i);
  }
  return std::nullopt;
}

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_EVENT_FIELDS_H_
