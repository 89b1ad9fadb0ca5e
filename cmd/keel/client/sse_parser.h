// SseParser: incremental parser of a `text/event-stream` body (the WHATWG
// HTML "server-sent events" interpretation rules).
//
// Bytes are fed in arbitrary pieces; a frame is complete at a blank line.
// Lines end in LF, CRLF or CR (also when the CR and LF arrive in different
// pieces); a leading UTF-8 BOM is skipped. Fields: `data` (repeated lines are
// joined with "\n"), `event`, `id` (ignored when it contains NUL), `retry`
// (ignored unless all digits); unknown fields are ignored; a line starting
// with ':' is a comment; "field" without a colon is the field with an empty
// value; one space after the colon is stripped. An unterminated frame at the
// end of the stream is discarded, as browsers do.
//
// Unlike EventSource, frames without data are not dropped: comment-only
// frames (`: keepalive`) and `retry:`-only frames are returned too, so a
// reader can tell a live idle stream from a dead one.
//
// Thread safety: none; one parser per stream.
#ifndef KEEL_CMD_KEEL_CLIENT_SSE_PARSER_H_
#define KEEL_CMD_KEEL_CLIENT_SSE_PARSER_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace keel::client {

struct SseFrame {
  std::optional<std::string> id;   // Set when the frame had an `id:` field.
  std::string event;               // The `event:` field; "" means "message".
  std::string data;                // `data:` lines joined with "\n".
  bool has_data = false;           // At least one `data:` field.
  std::optional<int64_t> retry_ms; // A valid `retry:` field.
  std::vector<std::string> comments;

  // What EventSource would dispatch: a frame with data.
  bool IsEvent() const { return has_data; }
  // The event type as EventSource reports it.
  std::string type() const { return event.empty() ? "message" : event; }
};

class SseParser {
 public:
  void Feed(absl::string_view bytes);

  // The next complete frame, if any.
  std::optional<SseFrame> Pop();
  bool HasFrame() const { return !ready_.empty(); }

  // The last `id:` seen (EventSource's "last event ID buffer").
  const std::string& last_event_id() const { return last_event_id_; }

 private:
  void ProcessLine(absl::string_view line);
  void Dispatch();

  std::string partial_;        // The current, unterminated line.
  bool skip_lf_ = false;       // The last piece ended with CR.
  bool at_start_ = true;       // Nothing fed yet (BOM check).
  SseFrame current_;
  bool current_started_ = false;
  std::string last_event_id_;
  std::deque<SseFrame> ready_;
};

}  // namespace keel::client

#endif  // KEEL_CMD_KEEL_CLIENT_SSE_PARSER_H_
