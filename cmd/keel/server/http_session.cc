// HTTP/1.1 session, after Beast's advanced server: one request and one
// write in flight, parser limits on header and body size, an idle timeout.
// The session's handlers all run on its I/O thread's context (one thread,
// so no strand is needed); handlers that may block run on the blocking
// pool, and the response is written back on the session's context.
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/url/parse.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "cmd/keel/server/http_errors.h"
#include "cmd/keel/server/sessions.h"
#include "cmd/keel/server/wire_response.h"

namespace keel::server {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace urls = boost::urls;

std::chrono::nanoseconds ToChrono(absl::Duration d) { return absl::ToChronoNanoseconds(d); }

absl::string_view View(beast::string_view text) { return {text.data(), text.size()}; }

// Converts a Beast request; a malformed target is a 400 response.
absl::StatusOr<HttpRequest> Convert(http::request<http::string_body>& raw) {
  HttpRequest request;
  request.method = std::string(raw.method_string());
  auto target = urls::parse_origin_form(raw.target());
  if (!target) return absl::InvalidArgumentError("malformed request target");
  request.path = std::string(target->encoded_path());
  // Reserved up front: growing them allocated again on every request.
  request.segments.reserve(8);
  for (auto segment : target->segments()) request.segments.push_back(std::string(segment));
  for (auto param : target->params()) request.query[param.key] = param.value;
  request.headers.reserve(16);
  for (const auto& field : raw) {
    request.headers[absl::AsciiStrToLower(std::string(field.name_string()))] =
        std::string(field.value());
  }
  request.body = std::move(raw.body());
  return request;
}

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(net::ip::tcp::socket socket, std::shared_ptr<ServerState> state,
              PublishCoalescer& publishes)
      : stream_(std::move(socket)), state_(std::move(state)), publishes_(publishes) {}

  void Run() {
    net::dispatch(stream_.get_executor(), beast::bind_front_handler(&HttpSession::DoRead,
                                                                    shared_from_this()));
  }

 private:
  void DoRead() {
    parser_.emplace();
    parser_->body_limit(state_->options.body_limit);
    parser_->header_limit(static_cast<uint32_t>(state_->options.header_limit));
    stream_.expires_after(ToChrono(state_->options.idle_timeout));
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&HttpSession::OnRead, shared_from_this()));
  }

  void OnRead(beast::error_code ec, std::size_t) {
    if (ec == http::error::body_limit) {
      return Reject(413, "payload_too_large",
                    absl::StrCat("request body exceeds ", state_->options.body_limit, " bytes"));
    }
    if (ec == http::error::header_limit) {
      return Reject(431, "headers_too_large", "request headers are too large");
    }
    if (ec) return Close();  // EOF, timeout, reset or unparsable request.
    http::request<http::string_body> raw = parser_->release();
    keep_alive_ = raw.keep_alive();
    started_ = absl::Now();
    request_line_.clear();
    absl::StrAppend(&request_line_, View(raw.method_string()), " ", View(raw.target()));
    absl::StatusOr<HttpRequest> request = Convert(raw);
    if (!request.ok()) return Reject(400, "invalid_argument", request.status().message());
    if (state_->draining.load()) {
      keep_alive_ = false;
      return Reject(503, "unavailable", "the daemon is shutting down");
    }
    if (state_->api.IsSse(*request)) return StartSse(*request);
    Dispatch(*std::move(request));
  }

  // Runs the handler on the blocking pool, then writes on the I/O thread; a
  // publish joins the others read in the same pass (PublishCoalescer).
  void Dispatch(HttpRequest request) {
    state_->requests_in_flight.fetch_add(1);
    if (Api::IsPublish(request)) {
      return publishes_.Add(std::move(request), [self = shared_from_this()](
                                                            HttpResponse response) {
        net::dispatch(self->stream_.get_executor(), [self, response = std::move(response)]() mutable {
          self->DoWrite(std::move(response), /*counted=*/true);
        });
      });
    }
    net::post(state_->blocking, [self = shared_from_this(), request = std::move(request)] {
      HttpResponse response = self->state_->api.Handle(request);
      net::post(self->stream_.get_executor(), [self, response = std::move(response)]() mutable {
        self->DoWrite(std::move(response), /*counted=*/true);
      });
    });
  }

  // Resolving the start (`after_time` searches the stream) and subscribing
  // (it reads the stream's bounds) read the store, so both run on the
  // blocking pool like any other store read.
  void StartSse(const HttpRequest& request) {
    net::post(state_->blocking, [self = shared_from_this(), request] {
      absl::StatusOr<Api::SseStart> start = self->state_->api.SubscribeSse(request);
      net::post(self->stream_.get_executor(), [self, start = std::move(start)]() mutable {
        self->OnSubscribed(std::move(start));
      });
    });
  }

  void OnSubscribed(absl::StatusOr<Api::SseStart> start) {
    if (!start.ok()) return RejectSse(start.status());
    LogRequest(200);
    StartSseSession(std::move(stream_), std::move(start->subscription), std::move(start->options),
                    state_);
  }

  void RejectSse(const absl::Status& status) {
    state_->api.metrics().CountError(ToHttpErrorCode(status).code);
    DoWrite(ErrorResponse(status), false);
  }

  void Reject(int status, absl::string_view code, absl::string_view message) {
    keep_alive_ = false;
    state_->api.metrics().CountError(code);
    DoWrite(ErrorResponse(status, code, message), false);
  }

  // One line per request at debug; server errors once at warn.
  void LogRequest(int status) {
    const LogLevel level = status >= 500 ? LogLevel::kWarn : LogLevel::kDebug;
    if (!state_->logger->Enabled(level)) return;
    state_->logger->Log(level, absl::StrCat(request_line_, " -> ", status, " in ",
                                            absl::FormatDuration(absl::Now() - started_)));
  }

  void DoWrite(HttpResponse response, bool counted) {
    LogRequest(response.status);
    const bool keep_alive = keep_alive_ && !state_->draining.load();
    out_ = WireResponse(response, state_->options.cors_origin, keep_alive);
    net::async_write(stream_, net::buffer(out_),
                     [self = shared_from_this(), counted, keep_alive](beast::error_code ec,
                                                                      std::size_t) {
                       if (counted) self->state_->requests_in_flight.fetch_sub(1);
                       if (ec || !keep_alive) return self->Close();
                       self->DoRead();
                     });
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::string out_;  // The response being written (one write in flight).
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<ServerState> state_;
  PublishCoalescer& publishes_;
  bool keep_alive_ = true;
  absl::Time started_;
  std::string request_line_;  // "METHOD target", for the request log.
};

}  // namespace

void StartHttpSession(net::ip::tcp::socket socket, std::shared_ptr<ServerState> state,
                      PublishCoalescer& publishes) {
  std::make_shared<HttpSession>(std::move(socket), std::move(state), publishes)->Run();
}

}  // namespace keel::server
