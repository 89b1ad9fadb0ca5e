#include "keel/coldstore/s3/http_connection.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::s3 {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// Objects are segments of a few MiB; a listing page is smaller still.
constexpr uint64_t kMaxResponseBytes = uint64_t{1} << 30;

std::chrono::steady_clock::duration ToChrono(absl::Duration d) {
  return std::chrono::nanoseconds(absl::ToInt64Nanoseconds(d));
}

}  // namespace

std::string Endpoint::authority() const {
  return port == 80 ? host : absl::StrCat(host, ":", port);
}

std::string Endpoint::Describe() const { return absl::StrCat("http://", authority()); }

absl::StatusOr<Endpoint> ParseEndpoint(absl::string_view url) {
  constexpr absl::string_view kHttp = "http://";
  if (!absl::StartsWith(url, kHttp)) {
    return InvalidArgument(absl::StrCat("s3 endpoint '", url,
                                        "' must start with http:// (https is not supported yet)"));
  }
  absl::string_view rest = url.substr(kHttp.size());
  if (absl::EndsWith(rest, "/")) rest.remove_suffix(1);
  if (rest.empty() || absl::StrContains(rest, "/") || absl::StrContains(rest, "@")) {
    return InvalidArgument(absl::StrCat("s3 endpoint '", url, "' is not http://host[:port]"));
  }
  Endpoint endpoint;
  const size_t colon = rest.rfind(':');
  if (colon == absl::string_view::npos || rest.back() == ']') {
    endpoint.host = std::string(rest);
    return endpoint;
  }
  uint32_t port = 0;
  if (!absl::SimpleAtoi(rest.substr(colon + 1), &port) || port == 0 || port > 65535) {
    return InvalidArgument(absl::StrCat("s3 endpoint '", url, "' has a bad port"));
  }
  endpoint.host = std::string(rest.substr(0, colon));
  endpoint.port = static_cast<uint16_t>(port);
  if (endpoint.host.empty())
    return InvalidArgument(absl::StrCat("s3 endpoint '", url, "' has no host"));
  return endpoint;
}

std::string HttpResponse::Header(absl::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return value;
  }
  return "";
}

class HttpConnection::Impl {
 public:
  Impl(Endpoint endpoint, absl::Duration connect_timeout, absl::Duration request_timeout)
      : endpoint_(std::move(endpoint)),
        connect_timeout_(connect_timeout),
        request_timeout_(request_timeout),
        stream_(ioc_) {}

  ~Impl() { Disconnect(); }

  absl::StatusOr<HttpResponse> Exchange(const HttpRequest& request) {
    http::request<http::string_body> raw;
    raw.method_string(request.method);
    raw.target(request.target);
    raw.version(11);
    raw.set(http::field::host, endpoint_.authority());
    raw.set(http::field::user_agent, "keel-coldstore");
    for (const auto& [name, value] : request.headers) raw.set(name, value);
    raw.body() = request.body;
    raw.keep_alive(true);
    raw.prepare_payload();
    // An empty PUT must still say so: some servers want a Content-Length.
    if (request.body.empty() && request.method == "PUT") raw.content_length(0);

    const bool reused = connected_;
    if (!connected_) KEEL_RETURN_IF_ERROR(Connect());
    bool got_response_bytes = false;
    absl::StatusOr<HttpResponse> response = RoundTrip(raw, got_response_bytes);
    if (response.ok()) return response;
    Disconnect();
    // A kept-alive connection the server closed while idle fails before
    // any response byte: the request never arrived, so sending it again on
    // a fresh connection is safe.
    if (reused && !got_response_bytes &&
        response.status().code() != absl::StatusCode::kDeadlineExceeded) {
      KEEL_RETURN_IF_ERROR(Connect());
      response = RoundTrip(raw, got_response_bytes);
      if (!response.ok()) Disconnect();
    }
    return response;
  }

 private:
  void RunToCompletion() {
    ioc_.restart();
    ioc_.run();
  }

  absl::Status TransportError(absl::string_view what, const beast::error_code& ec) const {
    const std::string message =
        absl::StrCat("s3: ", what, " ", endpoint_.Describe(), ": ", ec.message());
    if (ec == beast::error::timeout) return absl::DeadlineExceededError(message);
    return Unavailable(message);
  }

  absl::Status Connect() {
    beast::error_code ec;
    tcp::resolver resolver(ioc_);
    tcp::resolver::results_type results;
    resolver.async_resolve(endpoint_.host, std::to_string(endpoint_.port),
                           [&](beast::error_code e, tcp::resolver::results_type r) {
                             ec = e;
                             results = std::move(r);
                           });
    RunToCompletion();
    if (ec) return TransportError("cannot resolve", ec);
    stream_.expires_after(ToChrono(connect_timeout_));
    stream_.async_connect(results, [&](beast::error_code e, const tcp::endpoint&) { ec = e; });
    RunToCompletion();
    if (ec) return TransportError("cannot connect to", ec);
    stream_.expires_never();
    beast::error_code ignored;
    stream_.socket().set_option(tcp::no_delay(true), ignored);
    connected_ = true;
    buffer_.clear();
    return absl::OkStatus();
  }

  void Disconnect() {
    if (!connected_) return;
    connected_ = false;
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
    buffer_.clear();
  }

  absl::StatusOr<HttpResponse> RoundTrip(http::request<http::string_body>& request,
                                         bool& got_response_bytes) {
    beast::error_code ec;
    stream_.expires_after(ToChrono(request_timeout_));
    http::async_write(stream_, request, [&](beast::error_code e, size_t) { ec = e; });
    RunToCompletion();
    if (ec) return TransportError("cannot send a request to", ec);
    http::response_parser<http::string_body> parser;
    parser.body_limit(kMaxResponseBytes);
    if (request.method() == http::verb::head) parser.skip(true);
    http::async_read(stream_, buffer_, parser, [&](beast::error_code e, size_t) { ec = e; });
    RunToCompletion();
    got_response_bytes = parser.got_some();
    if (ec) return TransportError("no whole response from", ec);
    stream_.expires_never();

    http::response<http::string_body> raw = parser.release();
    HttpResponse response;
    response.status = static_cast<int>(raw.result_int());
    for (const auto& field : raw) {
      response.headers.emplace_back(absl::AsciiStrToLower(std::string(field.name_string())),
                                    std::string(field.value()));
    }
    response.body = std::move(raw.body());
    if (!raw.keep_alive()) Disconnect();
    return response;
  }

  const Endpoint endpoint_;
  const absl::Duration connect_timeout_;
  const absl::Duration request_timeout_;
  net::io_context ioc_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  bool connected_ = false;
};

HttpConnection::HttpConnection(Endpoint endpoint, absl::Duration connect_timeout,
                               absl::Duration request_timeout)
    : impl_(std::make_unique<Impl>(std::move(endpoint), connect_timeout, request_timeout)) {}

HttpConnection::~HttpConnection() = default;

absl::StatusOr<HttpResponse> HttpConnection::Exchange(const HttpRequest& request) {
  return impl_->Exchange(request);
}

}  // namespace keel::s3
