// HttpClient on Beast. Each operation is started asynchronously on a private
// io_context and run to completion; the tcp_stream's timer bounds it, so a
// dead server never hangs the caller.
#include "keel/cmd/keel/client/http_client.h"

#include <optional>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/client/client_stream.h"
#include "keel/cmd/keel/client/transport.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::client {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

}  // namespace

std::string ClientResponse::Header(absl::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return value;
  }
  return "";
}

class HttpClient::Impl {
 public:
  Impl(std::string host, uint16_t port, ClientOptions options)
      : host_(std::move(host)), port_(port), options_(options), stream_(ioc_, options_.tls) {}

  ~Impl() { Disconnect(); }

  absl::StatusOr<ClientResponse> Request(absl::string_view method, absl::string_view target,
                                         absl::string_view body, const Headers& headers) {
    http::request<http::string_body> request;
    request.method_string(beast::string_view(method.data(), method.size()));
    request.target(beast::string_view(target.data(), target.size()));
    request.version(11);
    request.set(http::field::host, absl::StrCat(host_, ":", port_));
    request.set(http::field::user_agent, "keel-client");
    SetToken(request, options_.token);
    for (const auto& [name, value] : headers) request.set(name, value);
    request.body() = std::string(body);
    request.keep_alive(true);
    request.prepare_payload();

    for (int attempt = 0;; ++attempt) {
      const bool reused = connected_;
      if (!connected_) {
        if (absl::Status connected = Connect(); !connected.ok()) return connected;
      }
      bool got_response_bytes = false;
      absl::StatusOr<ClientResponse> response = RoundTrip(request, got_response_bytes);
      if (response.ok()) return response;
      Disconnect();
      // A kept-alive connection the server closed while idle fails before
      // any response byte: safe to send again on a fresh connection.
      const bool stale = reused && !got_response_bytes &&
                         response.status().code() != absl::StatusCode::kDeadlineExceeded;
      if (!stale || attempt > 0) return response.status();
    }
  }

  void Disconnect() {
    if (!connected_) return;
    connected_ = false;
    stream_.Close();
    buffer_.clear();
  }

  int connections_opened() const { return connections_opened_; }
  const std::string& host() const { return host_; }
  uint16_t port() const { return port_; }

 private:
  // Runs the io_context until the started operation completed.
  void RunToCompletion() {
    ioc_.restart();
    ioc_.run();
  }

  absl::Status TransportError(absl::string_view what, const beast::error_code& ec) const {
    return client::TransportError(what, host_, port_, ec);
  }

  absl::Status Connect() {
    KEEL_RETURN_IF_ERROR(stream_.Connect(host_, port_, options_.connect_timeout));
    beast::error_code ignored;
    stream_.tcp().socket().set_option(tcp::no_delay(true), ignored);
    connected_ = true;
    ++connections_opened_;
    buffer_.clear();
    return absl::OkStatus();
  }

  absl::StatusOr<ClientResponse> RoundTrip(http::request<http::string_body>& request,
                                           bool& got_response_bytes) {
    beast::error_code ec;
    stream_.tcp().expires_after(ToChrono(options_.request_timeout));
    stream_.Visit([&](auto& stream) {
      http::async_write(stream, request, [&](beast::error_code e, size_t) { ec = e; });
    });
    RunToCompletion();
    const beast::error_code write_error = ec;
    if (write_error && IsTimeout(write_error)) {
      return TransportError("cannot send request to", write_error);
    }
    // Even when the write failed the server may have answered early (e.g.
    // 413 for a body over its limit, then closed): read what it sent.
    http::response_parser<http::string_body> parser;
    parser.body_limit(options_.max_response_bytes);
    if (request.method() == http::verb::head) parser.skip(true);
    stream_.Visit([&](auto& stream) {
      http::async_read(stream, buffer_, parser, [&](beast::error_code e, size_t) { ec = e; });
    });
    RunToCompletion();
    got_response_bytes = parser.got_some();
    if (ec && write_error) return TransportError("cannot send request to", write_error);
    if (ec) return TransportError("no response from", ec);
    stream_.tcp().expires_never();

    http::response<http::string_body> raw = parser.release();
    ClientResponse response;
    response.status = static_cast<int>(raw.result_int());
    for (const auto& field : raw) {
      response.headers.emplace_back(absl::AsciiStrToLower(std::string(field.name_string())),
                                    std::string(field.value()));
    }
    response.body = std::move(raw.body());
    if (write_error || !raw.keep_alive()) Disconnect();
    return response;
  }

  const std::string host_;
  const uint16_t port_;
  const ClientOptions options_;
  net::io_context ioc_;
  ClientStream stream_;
  beast::flat_buffer buffer_;
  bool connected_ = false;
  int connections_opened_ = 0;
};

HttpClient::HttpClient(std::string host, uint16_t port, ClientOptions options)
    : impl_(std::make_unique<Impl>(std::move(host), port, options)) {}

HttpClient::~HttpClient() = default;

absl::StatusOr<ClientResponse> HttpClient::Request(absl::string_view method,
                                                   absl::string_view target,
                                                   absl::string_view body,
                                                   const Headers& headers) {
  return impl_->Request(method, target, body, headers);
}

absl::StatusOr<ClientResponse> HttpClient::PostJson(absl::string_view target,
                                                    absl::string_view body, Headers headers) {
  bool has_type = false;
  for (const auto& [name, value] : headers) {
    has_type = has_type || absl::EqualsIgnoreCase(name, "content-type");
  }
  if (!has_type) headers.emplace_back("Content-Type", "application/json");
  return impl_->Request("POST", target, body, headers);
}

void HttpClient::Close() { impl_->Disconnect(); }
int HttpClient::connections_opened() const { return impl_->connections_opened(); }
const std::string& HttpClient::host() const { return impl_->host(); }
uint16_t HttpClient::port() const { return impl_->port(); }

}  // namespace keel::client
