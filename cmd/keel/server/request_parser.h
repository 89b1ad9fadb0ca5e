// Internal: RequestParser reads one HTTP/1.1 request with Beast's parser
// straight into an HttpRequest.
//
// Beast's request_parser keeps the header fields in a container of its own
// (an allocation per field), which the session then copied into the
// HttpRequest the API handlers take. This parser writes each field once,
// where the handlers read it, and the request line into a buffer the session
// reuses (for its log, and for the target, decoded once the request is read).
// The HttpRequest too is the session's, reused from request to request: it
// keeps the storage of a small request (HttpRequest::Clear), so a kept-alive
// connection's publish allocates no header table, path or body buffer
// afresh. Beast still
// enforces the header and body limits and decodes chunked bodies.
//
// Thread safety: one parser per request, used by one thread.
#ifndef KEEL_CMD_KEEL_SERVER_REQUEST_PARSER_H_
#define KEEL_CMD_KEEL_SERVER_REQUEST_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include <boost/beast/http/basic_parser.hpp>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "keel/cmd/keel/server/http_types.h"

namespace keel::server {

class RequestParser : public boost::beast::http::basic_parser<true> {
 public:
  // `request_line` receives "METHOD target" and `request` the request; both
  // outlive the parser. `request` comes empty: a session clears its request
  // once it has answered it (HttpSession::TrimBuffers), not again here.
  RequestParser(std::string& request_line, HttpRequest& request)
      : request_line_(request_line), request_(request) {}

  // Once the request is read: decodes its target into the request's path,
  // segments and query. A malformed target is an InvalidArgument error.
  absl::Status DecodeTarget();

 private:
  using string_view = boost::beast::string_view;
  using error_code = boost::beast::error_code;

  void on_request_impl(boost::beast::http::verb, string_view method, string_view target, int,
                       error_code&) override;
  void on_response_impl(int, string_view, int, error_code&) override {}
  void on_field_impl(boost::beast::http::field, string_view name, string_view value,
                     error_code&) override;
  void on_header_impl(error_code&) override {}
  void on_body_init_impl(const boost::optional<std::uint64_t>& content_length,
                         error_code&) override;
  std::size_t on_body_impl(string_view body, error_code&) override;
  void on_chunk_header_impl(std::uint64_t, string_view, error_code&) override {}
  std::size_t on_chunk_body_impl(std::uint64_t, string_view body, error_code&) override;
  void on_finish_impl(error_code&) override {}

  std::string& request_line_;
  HttpRequest& request_;
};

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_REQUEST_PARSER_H_
