// NatsClient: the jetstream driver's one connection to a NATS server or
// cluster (the C client, libnats), reduced to what the driver needs:
// requests with headers (many in flight at once: drivers/jetstream/
// request_mux.h), synchronous subscriptions and the connection's health.
//
// Every failure that leaves the outcome of a request unknown (a timeout, no
// responder, a dropped connection) is told apart from a reply, because a
// publish whose outcome is unknown must be resolved, never reported as
// failed (drivers/jetstream/claim.h).
//
// Thread safety: all methods are safe to call concurrently; a
// NatsSubscription is read by one thread at a time.
#ifndef KEEL_DRIVERS_JETSTREAM_NATS_CLIENT_H_
#define KEEL_DRIVERS_JETSTREAM_NATS_CLIENT_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

struct __natsConnection;
struct __natsSubscription;

namespace keel::jetstream {

class RequestMux;

// Message headers in the order they were set or received.
using NatsHeaders = std::vector<std::pair<std::string, std::string>>;

// The value of header `name`, or null.
const std::string* FindHeader(const NatsHeaders& headers, absl::string_view name);

// Parses a stored header block ("NATS/1.0\r\nKey: value\r\n...\r\n\r\n", as
// the JetStream API returns it); kDataLoss when it is not one.
absl::StatusOr<NatsHeaders> ParseHeaderBlock(absl::string_view block);

struct NatsClientOptions {
  std::vector<std::string> servers;  // nats://host:port URLs.
  std::string credentials_file;      // A .creds file (JWT and NKey seed).
  std::string token;
  std::string tls_ca_file;  // PEM file of the CAs to trust; enables TLS.
  std::string name = "keel";
  absl::Duration connect_timeout = absl::Seconds(5);
};

// A message received on a subscription.
struct NatsMessage {
  std::string subject;
  NatsHeaders headers;
  std::string data;
};

// How a request ended.
struct NatsReply {
  enum class Kind {
    kReplied,       // `data` holds the reply.
    kTimedOut,      // No reply in time: the request may or may not have been acted on.
    kNoResponders,  // Nobody listens on the subject (e.g. a stream without a leader).
    kClosed,        // The connection was closed by this process.
    kFailed,        // Not sent (a disconnected connection, a bad subject, ...).
  };
  Kind kind = Kind::kFailed;
  std::string data;
  std::string problem;  // For every kind but kReplied.
};

class NatsSubscription {
 public:
  explicit NatsSubscription(__natsSubscription* sub) : sub_(sub) {}
  ~NatsSubscription();
  NatsSubscription(const NatsSubscription&) = delete;
  NatsSubscription& operator=(const NatsSubscription&) = delete;

  // The next message, or nullopt after `timeout`; kCancelled once the
  // connection closed.
  absl::StatusOr<std::optional<NatsMessage>> Next(absl::Duration timeout);
  // Messages the client dropped because the reader fell behind.
  uint64_t dropped() const;

 private:
  __natsSubscription* const sub_;
};

class NatsClient {
 public:
  // kUnavailable when no server can be reached, kInvalidArgument for
  // unusable options (a missing credentials file, a bad URL).
  static absl::StatusOr<std::unique_ptr<NatsClient>> Connect(const NatsClientOptions& options);
  ~NatsClient();
  NatsClient(const NatsClient&) = delete;
  NatsClient& operator=(const NatsClient&) = delete;

  NatsReply Request(absl::string_view subject, const NatsHeaders& headers, absl::string_view data,
                    absl::Duration timeout);
  absl::StatusOr<std::unique_ptr<NatsSubscription>> Subscribe(absl::string_view subject);
  // The largest message the connected server accepts.
  size_t max_payload() const;
  // Empty while connected; otherwise what the connection is doing.
  std::string ConnectionProblem() const;
  // Ends the connection; later requests answer kClosed. Idempotent.
  void Close();

 private:
  explicit NatsClient(__natsConnection* connection);
  __natsConnection* const connection_;
  std::unique_ptr<RequestMux> requests_;
};

}  // namespace keel::jetstream

#endif  // KEEL_DRIVERS_JETSTREAM_NATS_CLIENT_H_
