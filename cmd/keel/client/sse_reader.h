// SseReader: one `GET /v1/streams/{stream}/sse` connection to the Keel
// daemon, read frame by frame.
//
//   SseOptions options;
//   options.stream = "orders";
//   options.last_event_id = saved_cursor;  // or options.after = "earliest"
//   auto reader = SseReader::Open("127.0.0.1", 8080, options);
//   while (true) {
//     absl::StatusOr<SseFrame> frame = (*reader)->Next(absl::Seconds(5));
//     if (absl::IsDeadlineExceeded(frame.status())) continue;  // still connected
//     if (!frame.ok()) break;  // the server closed the stream or it broke
//     ...
//   }
//
// Open fails with the server's error (client/errors.h: 400 invalid_cursor,
// 409 cursor_mismatch, ...) when the server refuses the stream, kUnavailable
// when it cannot be reached. The body is parsed incrementally whatever its
// framing (EOF-delimited as Keel sends it, or chunked through a proxy).
//
// Thread safety: one thread at a time.
#ifndef KEEL_CMD_KEEL_CLIENT_SSE_READER_H_
#define KEEL_CMD_KEEL_CLIENT_SSE_READER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/cmd/keel/client/sse_parser.h"

namespace keel::client {

struct SseOptions {
  std::string stream;
  // Resume position sent as the Last-Event-ID header when non-empty (it
  // takes precedence over `after` on the server).
  std::string last_event_id;
  // ?after= : "earliest", "latest" or a cursor; omitted when empty (the
  // server's default is "latest").
  std::string after;
  // ?after_time= (RFC 3339) instead of `after` when non-empty.
  std::string after_time;
  // ?after_sequence= (a sequence number) instead of `after` when non-empty.
  std::string after_sequence;
  std::string tenant;  // ?tenant= when non-empty.
  std::string type;    // ?type= (type prefix) when non-empty.
  absl::Duration connect_timeout = absl::Seconds(5);  // Connect + response head.
  Headers headers;     // Extra request headers.
  std::string token;   // As ClientOptions::token.
  ClientTls tls;       // As ClientOptions::tls.
};

class SseReader {
 public:
  static absl::StatusOr<std::unique_ptr<SseReader>> Open(const std::string& host, uint16_t port,
                                                         const SseOptions& options);
  ~SseReader();
  SseReader(const SseReader&) = delete;
  SseReader& operator=(const SseReader&) = delete;

  // The next frame (events, keel.gap, retry and comment-only frames).
  // DeadlineExceeded when none completed within `timeout`; the connection
  // stays open and a later call continues where this one stopped.
  // kUnavailable once the server ended the stream or the connection broke
  // (frames received before that are returned first).
  absl::StatusOr<SseFrame> Next(absl::Duration timeout);

  // The `id:` of the last frame Next() returned that had one: what to send
  // as Last-Event-ID to resume after everything returned so far.
  const std::string& last_event_id() const;
  // The server's `retry:` advice, once received.
  std::optional<absl::Duration> retry() const;

  // Closes the connection.
  void Close();

  class Impl;

 private:
  explicit SseReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The request target of an SSE stream for `options` (without headers).
std::string SseTarget(const SseOptions& options);

}  // namespace keel::client

#endif  // KEEL_CMD_KEEL_CLIENT_SSE_READER_H_
