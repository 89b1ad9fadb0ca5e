// The body of POST /v1/streams/{stream}/events (rfcs/0004-http-api.md): one
// event object or an array of them, each with optional "idempotencyKey" and,
// for a partitioned topic, "partitionKey"; a single-event body may carry
// "expectedLastSequence".
//
// Thread safety: pure functions.
#ifndef KEEL_CMD_KEEL_SERVER_PUBLISH_BODY_H_
#define KEEL_CMD_KEEL_SERVER_PUBLISH_BODY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/core/event.h"

namespace keel::server {

struct PublishBody {
  std::vector<Event> events;
  std::vector<std::string> partition_keys;  // One per event; empty when absent.
  std::optional<uint64_t> expected_last_sequence;
  bool was_array = false;
};

// `header_idempotency_key` (Idempotency-Key) applies to a single-event body
// without its own key; `header_expected` (Keel-Expected-Last-Sequence, empty
// when absent) to the whole publish. kInvalidArgument names the offending
// field and event index.
absl::StatusOr<PublishBody> ParsePublishBody(absl::string_view body,
                                             absl::string_view header_idempotency_key,
                                             absl::string_view header_expected);

// ParsePublishBody without its fast path for plain single events
// (plain_event.h), which must agree with it: what that path accepts, this
// accepts as the same body.
absl::StatusOr<PublishBody> ParsePublishBodyGeneral(absl::string_view body,
                                                    absl::string_view header_idempotency_key,
                                                    absl::string_view header_expected);

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_PUBLISH_BODY_H_
