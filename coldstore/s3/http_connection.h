// HttpConnection: one kept-alive HTTP/1.1 connection to an object store's
// endpoint, on Boost.Beast, with every operation bounded by a timeout.
//
// Each operation is started asynchronously on the connection's own
// io_context and run to completion; the tcp_stream's timer bounds it, so a
// server that stops answering never hangs the caller. A failed exchange
// closes the connection; the next one connects again.
//
// Thread safety: used by one thread at a time (S3ColdStore keeps a pool).
#ifndef KEEL_COLDSTORE_S3_HTTP_CONNECTION_H_
#define KEEL_COLDSTORE_S3_HTTP_CONNECTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace keel::s3 {

// Where requests go: "http://host[:port]".
struct Endpoint {
  std::string host;
  uint16_t port = 80;
  // The Host header: host, with ":port" unless it is the default one.
  std::string authority() const;
  std::string Describe() const;
};

// Parses "http://host[:port]" (a trailing '/' allowed). kInvalidArgument
// for anything else, https included: TLS is not supported yet.
absl::StatusOr<Endpoint> ParseEndpoint(absl::string_view url);

struct HttpRequest {
  std::string method;
  std::string target;  // Origin form, already encoded.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

struct HttpResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // Lower-case names.
  std::string body;
  // The first value of a header (lower-case name), or "".
  std::string Header(absl::string_view lower_name) const;
};

class HttpConnection {
 public:
  HttpConnection(Endpoint endpoint, absl::Duration connect_timeout, absl::Duration request_timeout);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // Sends `request` and reads the whole response (no body for HEAD).
  // kUnavailable when the endpoint cannot be reached or the connection
  // broke, kDeadlineExceeded (absl) when a timeout passed. Any HTTP status
  // is a response.
  absl::StatusOr<HttpResponse> Exchange(const HttpRequest& request);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace keel::s3

#endif  // KEEL_COLDSTORE_S3_HTTP_CONNECTION_H_
