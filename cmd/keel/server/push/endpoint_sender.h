// EndpointSender: POSTs a subscription's batches to its endpoint over one
// kept-alive connection (HTTP, or HTTPS checked against the system's CAs or
// `ca_file`), and says what the answer means for the batch:
//
//   2xx                          delivered
//   429, 408, 5xx, no answer     retry (connect failure, timeout, broken
//                                connection; Retry-After is read from 429 and 503)
//   anything else (4xx, 3xx)     rejected: the events are dead-lettered
//
// The connection is dropped after any failure, so a timed-out request's
// late answer is never read as the next one's.
//
// Thread safety: one caller at a time (a subscription's worker).
#ifndef KEEL_CMD_KEEL_SERVER_PUSH_ENDPOINT_SENDER_H_
#define KEEL_CMD_KEEL_SERVER_PUSH_ENDPOINT_SENDER_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/cmd/keel/server/push/endpoint_url.h"

namespace keel::push {

struct AttemptOutcome {
  enum class Kind { kDelivered, kRetry, kRejected };
  Kind kind = Kind::kRetry;
  int status = 0;      // The HTTP status; 0 when no answer came.
  std::string reason;  // Why it failed, for the dead letter: "HTTP 400: <body start>".
  std::optional<absl::Duration> retry_after;
  absl::Duration latency;
};

// Classifies an answer (or its absence) as above.
AttemptOutcome ClassifyResponse(const absl::StatusOr<client::ClientResponse>& response,
                                absl::Time now);

// Whether `outcome` says the endpoint, not the batch, is failing: no
// answer, 408 or 5xx (a 429 paces the sender; its endpoint is up). What
// the circuit breaker counts.
bool EndpointFailed(const AttemptOutcome& outcome);

class EndpointSender {
 public:
  EndpointSender(EndpointUrl url, absl::Duration timeout, std::string ca_file);

  AttemptOutcome Post(const std::string& body, const client::Headers& headers);

 private:
  const EndpointUrl url_;
  std::unique_ptr<client::HttpClient> http_;
};

}  // namespace keel::push

#endif  // KEEL_CMD_KEEL_SERVER_PUSH_ENDPOINT_SENDER_H_
