// FollowStream: follows one stream over SSE across disconnects, resuming
// with Last-Event-ID so that the caller sees every event strictly after its
// starting position exactly once, in order (`keel tail` is built on it).
//
// Start position: `last_event_id` when set, else `after`. When that is
// "latest" (or empty), the stream's head cursor is fetched first
// (GET /v1/streams/{stream}), so that a reconnect before the first event
// still resumes exactly where following began.
//
// Reconnects: when the connection cannot be opened (server down, 503 while
// draining, 5xx) or the stream ends or breaks, FollowStream waits and
// reconnects with the id of the last frame that carried one (or, after a
// `keel.gap` frame, with its `resume` cursor, so a gap is reported once). The wait
// starts at the server's `retry:` advice (else `default_retry`) and doubles
// per consecutive failure up to `max_backoff`; after `max_retries`
// consecutive failures the last error is returned. A connection that
// delivered at least one event resets the count. A 4xx answer (bad cursor,
// cursor of another stream, unknown route, a missing or refused token) is
// final and returned at once, except 429 (the daemon's rate limit): that is
// retried, waiting at least its Retry-After.
//
// Thread safety: runs on the calling thread; the callbacks run there too.
#ifndef KEEL_CMD_KEEL_CLIENT_FOLLOW_H_
#define KEEL_CMD_KEEL_CLIENT_FOLLOW_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/cmd/keel/client/sse_parser.h"

namespace keel::client {

struct FollowOptions {
  std::string stream;
  std::string after = "latest";  // earliest | latest | a cursor.
  std::string after_time;        // RFC 3339; instead of `after` when non-empty.
  std::string last_event_id;     // Resume position; takes precedence over `after`.
  std::string tenant;
  std::string type;              // Type prefix.
  std::string token;             // As ClientOptions::token.
  ClientTls tls;                 // As ClientOptions::tls.

  int max_retries = 10;  // Consecutive failed attempts before giving up.
  absl::Duration default_retry = absl::Seconds(1);
  absl::Duration max_backoff = absl::Seconds(30);
  absl::Duration connect_timeout = absl::Seconds(5);
  // How often `stop` is consulted while the stream is idle.
  absl::Duration poll_interval = absl::Milliseconds(200);

  // Optional: following ends (OK) once this returns true.
  std::function<bool()> stop;
  // Optional: called before each wait for a reconnect with the reason, the
  // wait and the attempt number (1 for the first retry).
  std::function<void(const absl::Status& reason, absl::Duration wait, int attempt)> on_reconnect;
};

// Calls `on_frame` for every frame that is an event (it has data: Keel
// events, `keel.gap` and `keel.error` frames); keepalive comments and
// `retry:` frames are consumed here. Returns OK when `on_frame` returned
// false or `stop` returned true, the final error otherwise.
absl::Status FollowStream(const std::string& host, uint16_t port, FollowOptions options,
                          const std::function<bool(const SseFrame&)>& on_frame);

}  // namespace keel::client

#endif  // KEEL_CMD_KEEL_CLIENT_FOLLOW_H_
