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

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "keel/core/subscription.h"

namespace keel::server {

// Appends the frame for `event` (an event or a bus notice) to `out`.
void AppendSseFrame(const Event& event, uint64_t epoch, std::string& out);

// Appends an id-only frame (a watermark: EventSource takes it as its last
// event ID without dispatching an event) to `out`.
void AppendSseIdFrame(const Cursor& position, std::string& out);

// Builds each event's frame once per thread instead of once per session:
// with thousands of sessions on one stream, formatting the same event's JSON
// and cursor per session was most of the fan-out's user CPU. Frames depend
// only on (bus, epoch, stream, sequence) because stored events never change,
// so `owner` must tell buses apart (one per Server). Direct-mapped and
// bounded: a miss just formats the frame again.
//
// Thread safety: none; keep one per thread (see ThreadSseFrameCache).
class SseFrameCache {
 public:
  // As many as the events a stream's fan-out tail keeps (core/fanout.h), so
  // that sessions catching up from the tail find their frames too.
  static constexpr size_t kSlots = 4096;

  SseFrameCache() : slots_(kSlots) {}
  // Appends the frame of `event` to `out`; notices are never cached.
  void Append(uint64_t owner, const Event& event, uint64_t epoch, std::string& out);

 private:
  struct Slot {
    uint64_t owner = 0;  // 0: empty.
    uint64_t epoch = 0;
    uint64_t sequence = 0;
    std::string stream;
    std::string frame;
  };
  std::vector<Slot> slots_;
};

// The calling thread's cache (the server's I/O threads share a few streams'
// recent events, so a small cache per thread needs no lock).
SseFrameCache& ThreadSseFrameCache();

// The response head and the `retry:` advice that open every SSE stream.
std::string SsePreamble(absl::Duration retry, const std::string& cors_origin);

inline constexpr char kSseKeepalive[] = ": keepalive\n\n";

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_SSE_FRAMES_H_
