// Publisher: one thread publishing to random streams of the crash loop,
// single events and small all-or-nothing batches, each event with its own
// idempotency key. A publish whose connection a kill broke has an unknown
// outcome (it may be stored or not): it is sent again, with the same keys,
// until the daemon answers, so every event is finally acknowledged once
// (a duplicate receipt when the first attempt had been stored).
#ifndef KEEL_TESTS_CRASH_PUBLISHER_H_
#define KEEL_TESTS_CRASH_PUBLISHER_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "keel/tests/crash/endpoint.h"
#include "keel/tests/crash/event_identity.h"
#include "keel/tests/crash/failures.h"

namespace keel::crash_test {

// An acknowledged (201) event: the receipt's stream, sequence and id, and
// the key it was published with.
struct Receipt {
  std::string stream;
  EventIdentity event;
  bool duplicate = false;  // The answer to a retry of an event already stored.
};

struct PublisherCounts {
  uint64_t acknowledged = 0;      // Events.
  uint64_t requests = 0;          // Publish requests sent, retries included.
  uint64_t unknown_outcomes = 0;  // Requests without an answer (daemon killed or down).
  uint64_t retried = 0;           // Events sent again after an unknown outcome.
  uint64_t duplicates = 0;        // Of those, events already stored before the kill.

  PublisherCounts& operator+=(const PublisherCounts& other);
};

struct PublisherOptions {
  int max_batch = 4;                                 // Events per request: 1..max_batch.
  absl::Duration max_pause = absl::Milliseconds(2);  // Between requests: 0..max_pause.
};

class Publisher {
 public:
  Publisher(int index, std::vector<std::string> streams, const Endpoint& endpoint,
            Failures& failures, uint64_t seed, PublisherOptions options = {});

  // Publishes until `stop`, then finishes the publish in flight (retrying
  // it until acknowledged). Call once.
  void Run(const std::atomic<bool>& stop);

  // After Run: every acknowledged event, in acknowledgement order.
  const std::vector<Receipt>& receipts() const { return receipts_; }
  const PublisherCounts& counts() const { return counts_; }

 private:
  enum class Outcome { kAcknowledged, kUnknown, kRefused };

  // Publishes `keys` as one request until acknowledged; false when the
  // daemon refused it or stayed unreachable.
  bool PublishUntilAcknowledged(const std::string& stream, const std::vector<std::string>& keys);
  Outcome Attempt(const std::string& stream, const std::vector<std::string>& keys, bool retry);
  // Checks the receipts of a 201 answer and records them.
  void Record(const std::string& stream, const std::vector<std::string>& keys,
              const std::string& body, bool retry);

  const int index_;
  const std::vector<std::string> streams_;
  EndpointClient client_;
  Failures& failures_;
  std::mt19937_64 rng_;
  const PublisherOptions options_;
  uint64_t next_key_ = 0;
  std::vector<Receipt> receipts_;
  // The last sequence this publisher was acknowledged on each stream: each
  // later publish must be stored after it, across restarts too.
  std::map<std::string, uint64_t> last_sequence_;
  PublisherCounts counts_;
};

}  // namespace keel::crash_test

#endif  // KEEL_TESTS_CRASH_PUBLISHER_H_
