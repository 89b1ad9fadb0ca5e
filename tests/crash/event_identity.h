// EventIdentity: what the crash loop's checks compare of a stored event,
// wherever it was read (replay page, SSE frame, consumer-group page): its
// sequence, the id the bus gave it, and the key its publisher wrote into its
// data, which is also the publish's idempotency key.
#ifndef KEEL_TESTS_CRASH_EVENT_IDENTITY_H_
#define KEEL_TESTS_CRASH_EVENT_IDENTITY_H_

#include <boost/json.hpp>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace keel::crash_test {

struct EventIdentity {
  uint64_t sequence = 0;
  std::string id;
  std::string key;

  bool operator==(const EventIdentity&) const = default;
};

// The event data a publisher sends for `key`.
std::string EventData(absl::string_view key);

// The identity of an event object (rfcs/0004 §5); an error when it is not
// one the crash loop's publishers wrote.
absl::StatusOr<EventIdentity> IdentityOf(const boost::json::object& event);
absl::StatusOr<EventIdentity> IdentityOf(absl::string_view event_json);

// "#<sequence> key=<key> id=<id>".
std::string Describe(const EventIdentity& event);

}  // namespace keel::crash_test

#endif  // KEEL_TESTS_CRASH_EVENT_IDENTITY_H_
