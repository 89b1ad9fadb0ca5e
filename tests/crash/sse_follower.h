// SseFollower: one thread following a stream over SSE from `earliest`, as a
// client that must see every event once: when a kill ends the connection it
// reconnects with Last-Event-ID = the id of the last event it received.
// Everything it receives is kept for the final check (exactly the stream's
// events 1..N, in order); a `keel.gap` or `keel.error` frame, or an event
// out of order, is a failure at once.
#ifndef KEEL_TESTS_CRASH_SSE_FOLLOWER_H_
#define KEEL_TESTS_CRASH_SSE_FOLLOWER_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "keel/cmd/keel/client/sse_parser.h"
#include "keel/cmd/keel/client/sse_reader.h"
#include "keel/tests/crash/endpoint.h"
#include "keel/tests/crash/event_identity.h"
#include "keel/tests/crash/failures.h"
#include "keel/tests/crash/final_heads.h"

namespace keel::crash_test {

class SseFollower {
 public:
  SseFollower(std::string stream, const Endpoint& endpoint, Failures& failures,
              const FinalHeads& heads);

  // Follows until it received the stream's final head, `abandon` is set,
  // or nothing arrived for daemon_test::kWait (a failure). Call once.
  void Run(const std::atomic<bool>& abandon);

  const std::string& stream() const { return stream_; }
  // After Run: every event received, in order of arrival.
  const std::vector<EventIdentity>& events() const { return events_; }
  // Connections that delivered the stream (the first and every resume).
  int connections() const { return connections_; }

 private:
  enum class After { kReconnect, kStop };

  bool ReachedFinalHead() const;
  // Reads one connection until it ends (kReconnect) or following is over.
  After ReadConnection(client::SseReader& reader, const std::atomic<bool>& abandon);
  void Receive(const client::SseFrame& frame);

  const std::string stream_;
  const Endpoint& endpoint_;
  Failures& failures_;
  const FinalHeads& heads_;
  std::vector<EventIdentity> events_;
  uint64_t last_sequence_ = 0;
  std::string last_event_id_;  // Empty until the first event: then `after=earliest`.
  int connections_ = 0;
  absl::Time give_up_;  // daemon_test::kWait after the last progress.
};

}  // namespace keel::crash_test

#endif  // KEEL_TESTS_CRASH_SSE_FOLLOWER_H_
