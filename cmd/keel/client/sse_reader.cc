// SseReader on Beast: a response_parser<buffer_body> reads the body in
// chunks that are fed to SseParser; Next() runs the private io_context one
// handler at a time so that a read can stay pending across calls.
#include "keel/cmd/keel/client/sse_reader.h"

#include <limits>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/client/client_stream.h"
#include "keel/cmd/keel/client/errors.h"
#include "keel/cmd/keel/client/transport.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::client {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

constexpr size_t kMaxErrorBody = 1 << 20;

}  // namespace

std::string SseTarget(const SseOptions& options) {
  std::vector<std::pair<std::string, std::string>> query;
  if (!options.after.empty()) query.emplace_back("after", options.after);
  if (!options.after_time.empty()) query.emplace_back("after_time", options.after_time);
  if (!options.after_sequence.empty()) {
    query.emplace_back("after_sequence", options.after_sequence);
  }
  if (!options.tenant.empty()) query.emplace_back("tenant", options.tenant);
  if (!options.type.empty()) query.emplace_back("type", options.type);
  return BuildTarget({"v1", "streams", options.stream, "sse"}, query);
}

class SseReader::Impl {
 public:
  Impl(std::string host, uint16_t port, ClientTls tls)
      : host_(std::move(host)), port_(port), stream_(ioc_, std::move(tls)) {
    parser_.body_limit(std::numeric_limits<std::uint64_t>::max());
  }

  absl::Status Open(const SseOptions& options) {
    // The connect deadline also bounds the request and the response head.
    const absl::Time deadline = absl::Now() + options.connect_timeout;
    KEEL_RETURN_IF_ERROR(stream_.Connect(host_, port_, options.connect_timeout));
    stream_.tcp().expires_after(ToChrono(deadline - absl::Now()));
    beast::error_code ec;

    http::request<http::empty_body> request(http::verb::get, SseTarget(options), 11);
    request.set(http::field::host, absl::StrCat(host_, ":", port_));
    request.set(http::field::user_agent, "keel-client");
    request.set(http::field::accept, "text/event-stream");
    request.set(http::field::cache_control, "no-cache");
    if (!options.last_event_id.empty()) request.set("Last-Event-ID", options.last_event_id);
    SetToken(request, options.token);
    for (const auto& [name, value] : options.headers) request.set(name, value);
    stream_.Visit([&](auto& stream) {
      http::async_write(stream, request, [&](beast::error_code e, size_t) { ec = e; });
    });
    RunToCompletion();
    if (ec) return Transport("cannot send request to", ec);

    stream_.Visit([&](auto& stream) {
      http::async_read_header(stream, buffer_, parser_, [&](beast::error_code e, size_t) { ec = e; });
    });
    RunToCompletion();
    if (ec) return Transport("no response from", ec);

    const auto& head = parser_.get();
    if (head.result_int() != 200) return ReadError();
    const std::string content_type = absl::AsciiStrToLower(
        std::string(head[http::field::content_type]));
    if (!absl::StartsWith(content_type, "text/event-stream")) {
      return absl::InternalError(absl::StrCat("expected text/event-stream from ", host_, ":",
                                              port_, ", got '", content_type, "'"));
    }
    stream_.tcp().expires_never();
    return absl::OkStatus();
  }

  absl::StatusOr<SseFrame> Next(absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    while (true) {
      if (std::optional<SseFrame> frame = parser_sse_.Pop()) {
        if (frame->retry_ms) retry_ = absl::Milliseconds(*frame->retry_ms);
        if (frame->id) last_event_id_ = *frame->id;
        return *std::move(frame);
      }
      if (!end_.ok()) return end_;
      if (!read_pending_) StartRead();
      const absl::Duration remaining = deadline - absl::Now();
      if (remaining <= absl::ZeroDuration()) {
        return absl::DeadlineExceededError(absl::StrCat("no SSE frame within ", absl::FormatDuration(timeout)));
      }
      ioc_.restart();
      ioc_.run_one_for(ToChrono(remaining));
    }
  }

  void Close() {
    if (!end_.ok() && closed_) return;
    closed_ = true;
    if (end_.ok()) end_ = absl::CancelledError("the SSE reader was closed");
    stream_.Close();
  }

  const std::string& last_event_id() const { return last_event_id_; }
  std::optional<absl::Duration> retry() const { return retry_; }

 private:
  void RunToCompletion() {
    ioc_.restart();
    ioc_.run();
  }

  absl::Status Transport(absl::string_view what, const beast::error_code& ec) const {
    return TransportError(what, host_, port_, ec);
  }

  // Reads the (bounded) body of a non-200 answer into an error status.
  absl::Status ReadError() {
    ClientResponse response;
    response.status = static_cast<int>(parser_.get().result_int());
    for (const auto& field : parser_.get()) {
      response.headers.emplace_back(absl::AsciiStrToLower(std::string(field.name_string())),
                                    std::string(field.value()));
    }
    char chunk[4096];
    beast::error_code ec;
    while (!parser_.is_done() && response.body.size() < kMaxErrorBody) {
      parser_.get().body().data = chunk;
      parser_.get().body().size = sizeof(chunk);
      stream_.Visit([&](auto& stream) {
        http::async_read_some(stream, buffer_, parser_, [&](beast::error_code e, size_t) { ec = e; });
      });
      RunToCompletion();
      response.body.append(chunk, sizeof(chunk) - parser_.get().body().size);
      if (ec == http::error::need_buffer) ec = {};
      if (ec) break;
    }
    Close();
    return ErrorFromResponse(response);
  }

  void StartRead() {
    read_pending_ = true;
    parser_.get().body().data = chunk_;
    parser_.get().body().size = sizeof(chunk_);
    stream_.Visit([this](auto& stream) { ReadSome(stream); });
  }

  template <typename Stream>
  void ReadSome(Stream& stream) {
    http::async_read_some(stream, buffer_, parser_, [this](beast::error_code ec, size_t) {
      read_pending_ = false;
      parser_sse_.Feed(absl::string_view(chunk_, sizeof(chunk_) - parser_.get().body().size));
      if (ec == http::error::need_buffer) ec = {};
      if (IsEndOfStream(ec) || (!ec && parser_.is_done())) {
        end_ = Unavailable(absl::StrCat("the server at ", host_, ":", port_,
                                        " ended the SSE stream"));
      } else if (ec) {
        end_ = Transport("SSE connection to", ec);
      }
    });
  }

  const std::string host_;
  const uint16_t port_;
  net::io_context ioc_;
  ClientStream stream_;
  beast::flat_buffer buffer_;
  http::response_parser<http::buffer_body> parser_;
  SseParser parser_sse_;
  char chunk_[16 << 10];
  bool read_pending_ = false;
  bool closed_ = false;
  absl::Status end_;  // Non-OK once the stream ended.
  std::optional<absl::Duration> retry_;
  std::string last_event_id_;  // Of the last frame Next() returned.
};

absl::StatusOr<std::unique_ptr<SseReader>> SseReader::Open(const std::string& host, uint16_t port,
                                                           const SseOptions& options) {
  auto impl = std::make_unique<Impl>(host, port, options.tls);
  if (absl::Status opened = impl->Open(options); !opened.ok()) return opened;
  return std::unique_ptr<SseReader>(new SseReader(std::move(impl)));
}

SseReader::SseReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SseReader::~SseReader() = default;

absl::StatusOr<SseFrame> SseReader::Next(absl::Duration timeout) { return impl_->Next(timeout); }
const std::string& SseReader::last_event_id() const { return impl_->last_event_id(); }
std::optional<absl::Duration> SseReader::retry() const { return impl_->retry(); }
void SseReader::Close() { impl_->Close(); }

}  // namespace keel::client
