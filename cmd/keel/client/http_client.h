// HttpClient: a small synchronous HTTP/1.1 client for the Keel daemon's API
// (cmd/keel/server, rfcs/0004-http-api.md), on Boost.Beast behind a pimpl.
//
//   keel::client::HttpClient http("127.0.0.1", 8080);
//   auto response = http.Request("POST", BuildTarget({"v1", "streams", "orders", "events"}),
//                                R"({"type":"order.created","data":{}})",
//                                {{"Content-Type", "application/json"}});
//
// One connection is kept alive and reused across requests. A request that
// fails on a *reused* connection before any byte of the response arrived
// (the server closed the idle connection meanwhile) is retried once on a new
// connection; every other failure is returned. Responses with any status
// are returned as values; ErrorFromResponse (client/errors.h) turns a non-2xx
// response into a status.
//
// Errors: kUnavailable when the server cannot be reached or the connection
// broke, DeadlineExceeded when connect_timeout / request_timeout passed.
//
// Thread safety: an HttpClient is used by one thread at a time; use one
// client per thread.
#ifndef KEEL_CMD_KEEL_CLIENT_HTTP_CLIENT_H_
#define KEEL_CMD_KEEL_CLIENT_HTTP_CLIENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace keel::client {

// Header fields in order; names as given (requests) or lower-case (responses).
using Headers = std::vector<std::pair<std::string, std::string>>;

// TLS to a daemon serving `--tls-cert` (an `https://` server address).
// The server's certificate must chain to `ca_file` (or, when empty, to the
// system's trusted CAs) and name the host connected to (DNS name or IP
// address). A daemon that asks for client certificates gets `cert_file`
// and `key_file`.
struct ClientTls {
  bool enabled = false;
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
};

struct ClientOptions {
  absl::Duration connect_timeout = absl::Seconds(5);  // Resolve + TCP connect.
  absl::Duration request_timeout = absl::Seconds(60);  // Write request + read response.
  size_t max_response_bytes = 64 << 20;                // Response body limit.
  // Sent as `Authorization: Bearer <token>` when not empty (a daemon with
  // --auth-tokens); a request's own Authorization header wins.
  std::string token = {};
  ClientTls tls = {};
};

struct ClientResponse {
  int status = 0;
  Headers headers;  // Lower-case names.
  std::string body;

  // The first value of a header (lower-case name), or "" when absent.
  std::string Header(absl::string_view lower_name) const;
  bool ok() const { return status >= 200 && status < 300; }
};

class HttpClient {
 public:
  HttpClient(std::string host, uint16_t port, ClientOptions options = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends one request. `target` is an origin-form target ("/v1/streams?prefix=a",
  // see BuildTarget). Host, User-Agent and Content-Length are set here.
  absl::StatusOr<ClientResponse> Request(absl::string_view method, absl::string_view target,
                                         absl::string_view body = "",
                                         const Headers& headers = {});

  absl::StatusOr<ClientResponse> Get(absl::string_view target, const Headers& headers = {}) {
    return Request("GET", target, "", headers);
  }
  // POST with Content-Type: application/json.
  absl::StatusOr<ClientResponse> PostJson(absl::string_view target, absl::string_view body,
                                          Headers headers = {});

  // Closes the kept-alive connection (the next request opens a new one).
  void Close();

  // TCP connections opened so far (keep-alive reuse keeps this at 1).
  int connections_opened() const;

  const std::string& host() const;
  uint16_t port() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// A server address: "HOST:PORT", "[v6 address]:PORT", optionally prefixed by
// "http://" or "https://" (TLS) and followed by "/".
struct ServerAddress {
  std::string host;
  uint16_t port = 0;
  bool tls = false;  // "https://".
};
absl::StatusOr<ServerAddress> ParseServerAddress(absl::string_view text);

// An origin-form request target from decoded path segments and query
// parameters (percent-encoded here): BuildTarget({"v1", "streams"}, {{"prefix", "a b"}})
// is "/v1/streams?prefix=a%20b". Parameters with empty values are kept.
std::string BuildTarget(const std::vector<std::string>& segments,
                        const std::vector<std::pair<std::string, std::string>>& query = {});

}  // namespace keel::client

#endif  // KEEL_CMD_KEEL_CLIENT_HTTP_CLIENT_H_
