// Internal: ParsePlainEvent, the fast path of ParsePublishBody for the
// common single-event body.
//
// A single-event publish is mostly a small object of short plain strings and
// some data. Building Boost.JSON's document for it, then reading each field
// back out of it, was about a sixth of the instructions a daemon spends on
// such a publish outside the kernel; this path takes half as many (4,779
// against 2,480 per body under callgrind, with a 100-byte data string). It
// reads the body once, and takes only what it can decide for sure: one
// object whose names are among type, tenant, id, idempotencyKey,
// partitionKey (plain ASCII strings, no escapes), attributes (an object of
// such strings) and data (any JSON value within the limits in the .cc),
// each once, with nothing but whitespace around it. Anything else (a batch,
// an escape or a null outside data, a non-ASCII byte, another field, a
// repeated name, deep nesting, a long number, invalid JSON) is left to the
// general parser, which accepts or refuses it with its reason. What this
// path accepts, the general parser accepts as the same event.
//
// Thread safety: a pure function.
#ifndef KEEL_CMD_KEEL_SERVER_PLAIN_EVENT_H_
#define KEEL_CMD_KEEL_SERVER_PLAIN_EVENT_H_

#include <optional>

#include "absl/strings/string_view.h"
#include "keel/cmd/keel/server/publish_body.h"

namespace keel::server {

// The body's one event, or nullopt when the general parser must decide.
std::optional<PublishBody> ParsePlainEvent(absl::string_view text);

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_PLAIN_EVENT_H_
