// Server-Sent Events framing for Keel events and notices.
//
//   id: <cursor>            an event; the cursor is what a reconnecting
//   event: <type>           client sends back as Last-Event-ID
//   data: <event JSON>
//
//   event: keel.gap         a retention gap (no id: the client's resume
//   data: {"requested","oldest","missed","first","last"}   position is unchanged)
//
// Data that contains line breaks is split over several `data:` lines, which
// SSE clients join with "\n".
//
// Thread safety: pure functions.
#ifndef KEEL_CMD_KEEL_SERVER_SSE_FRAMES_H_
#define KEEL_CMD_KEEL_SERVER_SSE_FRAMES_H_

#include <string>

#include "absl/time/time.h"
#include "core/subscription.h"

namespace keel::server {

// Appends the frame for `event` (an event or a bus notice) to `out`.
void AppendSseFrame(const Event& event, uint64_t epoch, std::string& out);

// The response head and the `retry:` advice that open every SSE stream.
std::string SsePreamble(absl::Duration retry, const std::string& cors_origin);

inline constexpr char kSseKeepalive[] = ": keepalive\n\n";

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_SSE_FRAMES_H_
