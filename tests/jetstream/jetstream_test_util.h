// Helpers shared by the jetstream driver's tests: opening "daemons" (one
// bus instance each, with its own NATS connection) on a shared bus, events,
// and reading a whole stream.
#ifndef KEEL_TESTS_JETSTREAM_JETSTREAM_TEST_UTIL_H_
#define KEEL_TESTS_JETSTREAM_JETSTREAM_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/core/clock.h"
#include "keel/core/config.h"
#include "keel/core/event_bus.h"

namespace keel::jetstream::testing {

// Opens a jetstream bus with `config` (servers of the shared cluster added
// when missing) on `clock` (the real clock when null).
absl::StatusOr<std::unique_ptr<EventBus>> OpenDaemon(Config config, Clock* clock = nullptr);

// An event of `stream` with `payload`.
Event Payload(absl::string_view stream, absl::string_view payload);

// Every retained event of `stream`, paging from earliest.
absl::StatusOr<std::vector<Event>> ReadAll(EventBus& bus, absl::string_view stream);

// Sends a raw JetStream API request to `servers` and returns the reply.
absl::StatusOr<std::string> ApiRequest(const std::string& servers, const std::string& subject,
                                       const std::string& body);

}  // namespace keel::jetstream::testing

#endif  // KEEL_TESTS_JETSTREAM_JETSTREAM_TEST_UTIL_H_
