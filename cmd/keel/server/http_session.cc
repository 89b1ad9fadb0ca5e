// HTTP/1.1 session, after Beast's advanced server: one request and one
// write in flight, parser limits on header and body size, an idle timeout.
// The session's handlers all run on its I/O thread's context (one thread,
// so no strand is needed); handlers that may block run on the blocking
// pool, and the response is written back on the session's context.
//
// The session reads and writes its socket directly, not through Beast's
// tcp_stream: that armed and cancelled a timer around every read and every
// write, two timer-queue round trips per request. Here one timer per
// session enforces the idle timeout: each socket operation sets a deadline,
// and the timer, when it fires, closes a connection past its deadline or
// sleeps until the current one.
//
// A request refused before it was read to its end (413 for a body over the
// limit, 431 for headers over theirs) ends its connection with a lingering
// close, as nginx and Go's net/http do: the client may still be sending
// the body, and a socket closed with unread bytes in it sends a reset,
// which fails the client's send and destroys the answer it has not read
// (Python's http.client, which writes the whole body before reading, saw a
// broken pipe instead of the 413). So the session answers, ends its side
// of the connection, and reads and discards what still comes, without
// keeping it, until the client closes, until kLingerBytes or
// kLingerTime (whichever comes first), then closes.
#include <algorithm>
#include <bit>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/client_key.h"
#include "keel/cmd/keel/server/http_errors.h"
#include "keel/cmd/keel/server/request_parser.h"
#include "keel/cmd/keel/server/send_now.h"
#include "keel/cmd/keel/server/sessions.h"
#include "keel/cmd/keel/server/wire_response.h"

namespace keel::server {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

using Clock = std::chrono::steady_clock;
using Timer = net::basic_waitable_timer<Clock, net::wait_traits<Clock>, HttpSocket::executor_type>;

// An infinite idle timeout (`--idle-timeout inf`) is this long: deadlines
// are `now + timeout`, which must not overflow.
constexpr Clock::duration kLongestIdleTimeout = std::chrono::hours(24 * 365 * 100);

// The read and response buffers a connection keeps between requests are at
// most this large: one that once carried a big body or page gives the rest
// back (HttpRequest::Clear bounds the request's own storage).
constexpr size_t kKeptBufferBytes = 64 * 1024;

// A read buffer grows to fit the requests its connection sends up to this
// size: larger ones are read in several parts.
constexpr size_t kFittedReadBytes = 16 * 1024;

// A lingering close discards at most this much of what a refused request
// still sends, for at most this long (and never longer than the idle
// timeout): a client that sends its whole body before reading gets its
// answer for bodies up to this size sent at loopback or LAN speed, and a
// client that keeps sending costs one bounded read loop.
constexpr size_t kLingerBytes = 64 * 1024 * 1024;
constexpr Clock::duration kLingerTime = std::chrono::seconds(5);

// Discarded bytes are read this many at a time.
constexpr size_t kLingerReadBytes = 64 * 1024;

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(HttpSocket socket, std::shared_ptr<ServerState> state, PublishCoalescer& publishes,
              std::string client)
      : socket_(std::move(socket)),
        idle_timer_(socket_.get_executor()),
        state_(std::move(state)),
        publishes_(publishes),
        idle_timeout_(std::min<Clock::duration>(
            absl::ToChronoNanoseconds(state_->options.idle_timeout), kLongestIdleTimeout)),
        client_(std::move(client)) {}

  void Run() {
    net::dispatch(socket_.get_executor(), [self = shared_from_this()] {
      if (self->state_->gate.needs_client() && self->client_.empty()) {
        self->client_ = self->ClientAddress();
      }
      self->ArmDeadline();
      self->WaitIdle(self->deadline_);
      self->StartRequest();
      self->ReadRequest();  // A new client has usually sent its request already.
    });
  }

 private:
  // A fresh parser for the next request, into the session's request.
  void StartRequest() {
    parser_.emplace(request_line_, request_);
    parser_->body_limit(state_->options.body_limit);
    parser_->header_limit(static_cast<uint32_t>(state_->options.header_limit));
    request_bytes_ = 0;
  }

  // Reads and parses what the socket has (non-blocking), and waits for more
  // until the request is whole, by the deadline the caller set: the idle
  // timeout runs from when the connection fell idle, not from the first
  // byte of the request. Beast's synchronous read on the non-blocking
  // socket, not its asynchronous one: that took a composed operation and a
  // posted completion per request, where a request that is there is read
  // and parsed here at once (as SendNow writes a response).
  void ReadRequest() {
    beast::error_code ec;
    request_bytes_ += http::read(socket_, buffer_, *parser_, ec);
    if (ec == net::error::would_block || ec == net::error::try_again) return WaitReadable();
    OnRead(ec, request_bytes_);
  }

  void WaitReadable() {
    socket_.async_wait(net::socket_base::wait_read,
                       [self = shared_from_this()](beast::error_code ec) {
                         if (ec) return self->Close();  // Idle timeout, or closed.
                         self->ReadRequest();
                       });
  }

  void OnRead(beast::error_code ec, size_t request_bytes) {
    deadline_ = Clock::time_point::max();  // No socket operation until the response.
    if (ec == http::error::body_limit) {
      linger_ = true;  // The rest of the body may be on its way.
      return Reject(413, "payload_too_large",
                    absl::StrCat("request body exceeds ", state_->options.body_limit, " bytes"));
    }
    if (ec == http::error::header_limit) {
      linger_ = true;
      return Reject(431, "headers_too_large", "request headers are too large");
    }
    if (ec) return Close();  // EOF, idle timeout, reset or unparsable request.
    keep_alive_ = parser_->keep_alive();
    if (keep_alive_) FitBuffer(request_bytes);
    started_ = absl::Now();
    if (absl::Status target = parser_->DecodeTarget(); !target.ok()) {
      return Reject(400, "invalid_argument", target.message());
    }
    if (state_->draining.load()) {
      keep_alive_ = false;
      return Reject(503, "unavailable", "the daemon is shutting down");
    }
    const RouteMatch route = Api::Resolve(request_);
    if (std::optional<RequestGate::Refusal> refusal =
            state_->gate.Check(request_, route, client_)) {
      state_->api.metrics().CountError(refusal->code);
      return DoWrite(std::move(refusal->response), false);  // The connection stays open.
    }
    if (route.route != nullptr && route.route->streamed()) return AdmitSse(route.params);
    Dispatch(route);
  }

  // The client as the rate limit counts it.
  std::string ClientAddress() const {
    beast::error_code ec;
    const auto endpoint = socket_.remote_endpoint(ec);
    return ec ? std::string() : RateLimitKey(endpoint.address());
  }

  // A socket operation starts: it must end within the idle timeout.
  void ArmDeadline() { deadline_ = Clock::now() + idle_timeout_; }

  // The idle timeout: the timer sleeps until the current deadline, which
  // each socket operation moves, and closes the connection once a read or
  // a write has waited past it. Between a request and its response (the
  // handler at work) there is no deadline.
  void WaitIdle(Clock::time_point until) {
    idle_timer_.expires_at(until);
    idle_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || !self->open_) return;
      const Clock::time_point now = Clock::now();
      if (now < self->deadline_) {
        return self->WaitIdle(std::min(self->deadline_, now + self->idle_timeout_));
      }
      beast::error_code ignored;
      self->socket_.close(ignored);  // The pending operation ends with an error.
    });
  }

  // Runs the route's handler on the blocking pool, then writes on the I/O
  // thread; a publish joins the others read in the same pass
  // (PublishCoalescer). The request stays as it is until the response is
  // written (the next one is read only then), and so do the route's views
  // into it.
  void Dispatch(const RouteMatch& route) {
    state_->requests_in_flight.fetch_add(1);
    if (Api::IsPublish(route)) {
      return publishes_.Add({&request_, route}, [self = shared_from_this()](HttpResponse response) {
        net::dispatch(self->socket_.get_executor(),
                      [self, response = std::move(response)]() mutable {
                        self->DoWrite(std::move(response), /*counted=*/true);
                      });
      });
    }
    net::post(state_->blocking, [self = shared_from_this(), route] {
      HttpResponse response = self->state_->api.Handle(self->request_, route);
      net::post(self->socket_.get_executor(), [self, response = std::move(response)]() mutable {
        self->DoWrite(std::move(response), /*counted=*/true);
      });
    });
  }

  // A stream holds its slot (RequestGate::AdmitStream) while it is open.
  void AdmitSse(const RouteParams& params) {
    std::unique_ptr<ConnectionSlot> slot;
    if (std::optional<RequestGate::Refusal> refusal = state_->gate.AdmitStream(request_, &slot)) {
      state_->api.metrics().CountError(refusal->code);
      return DoWrite(std::move(refusal->response), false);
    }
    StartSse(params, std::shared_ptr<ConnectionSlot>(std::move(slot)));
  }

  // Resolving the start (`after_time` searches the stream) and subscribing
  // (it reads the stream's bounds) read the store, so both run on the
  // blocking pool like any other store read.
  void StartSse(const RouteParams& params, std::shared_ptr<ConnectionSlot> slot) {
    net::post(state_->blocking, [self = shared_from_this(), params, slot = std::move(slot)] {
      absl::StatusOr<Api::SseStart> start = self->state_->api.SubscribeSse(self->request_, params);
      net::post(self->socket_.get_executor(), [self, start = std::move(start), slot]() mutable {
        self->OnSubscribed(std::move(start), std::move(slot));
      });
    });
  }

  void OnSubscribed(absl::StatusOr<Api::SseStart> start, std::shared_ptr<ConnectionSlot> slot) {
    if (!start.ok()) return RejectSse(start.status());
    LogRequest(200);
    StopIdleTimer();
    StartSseSession(socket_, std::move(start->subscription), std::move(start->options), state_,
                    std::move(slot));
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

  // One line per request at debug; server errors once at warn. The line is
  // logfmt (`key=value` fields), so log tools can filter on the fields:
  //   request method=GET target=/v1/streams/orders status=200 duration=1.2ms
  void LogRequest(int status) {
    const LogLevel level = status >= 500 ? LogLevel::kWarn : LogLevel::kDebug;
    if (!state_->logger->Enabled(level)) return;
    const absl::string_view line = state_->gate.Loggable(request_line_);
    const size_t space = std::min(line.find(' '), line.size());
    state_->logger->Log(level, absl::StrCat("request method=", line.substr(0, space),
                                            " target=", line.substr(std::min(space + 1, line.size())),
                                            " status=", status, " duration=",
                                            absl::FormatDuration(absl::Now() - started_)));
  }

  // A response is first written straight to the socket (non-blocking),
  // which takes all of a small one: no write operation, completion or
  // handler through Asio. What the socket does not take is written
  // asynchronously.
  void DoWrite(HttpResponse response, bool counted) {
    LogRequest(response.status);
    const bool keep_alive = keep_alive_ && !state_->draining.load();
    WireResponse(response, state_->options.cors_origin, keep_alive, out_);
    beast::error_code ec;
    const size_t sent = SendNow(socket_, net::buffer(out_), ec);
    if (ec || sent == out_.size()) return OnWritten(ec, counted, keep_alive);
    ArmDeadline();
    net::async_write(
        socket_, net::buffer(out_) + sent,
        [self = shared_from_this(), counted, keep_alive](beast::error_code ec, std::size_t) {
          self->OnWritten(ec, counted, keep_alive);
        });
  }

  void OnWritten(beast::error_code ec, bool counted, bool keep_alive) {
    if (counted) state_->requests_in_flight.fetch_sub(1);
    TrimBuffers();
    if (!ec && linger_) return LingeringClose();
    if (ec || !keep_alive) return Close();
    AwaitRequest();
  }

  // Ends a connection whose request was refused unread (the file comment):
  // the answer is out; the client sees the end of it (our FIN) while what
  // it still sends is read and discarded, up to kLingerBytes and until the
  // idle timer closes the socket at the linger deadline.
  void LingeringClose() {
    beast::error_code ignored;
    socket_.shutdown(net::ip::tcp::socket::shutdown_send, ignored);
    buffer_.clear();
    deadline_ = Clock::now() + std::min(idle_timeout_, kLingerTime);
    WaitIdle(deadline_);  // The timer may be set for later: a whole idle timeout.
    Discard();
  }

  // One read, then a wait for the next: a client sending fast does not
  // hold the I/O thread from its other connections.
  void Discard() {
    beast::error_code ec;
    lingered_bytes_ += socket_.read_some(buffer_.prepare(kLingerReadBytes), ec);
    if (ec && ec != net::error::would_block && ec != net::error::try_again) {
      return StopIdleTimer();  // The client closed (it has read the answer), or reset.
    }
    if (lingered_bytes_ >= kLingerBytes) return StopIdleTimer();
    socket_.async_wait(net::socket_base::wait_read,
                       [self = shared_from_this()](beast::error_code ec) {
                         if (ec) return self->StopIdleTimer();  // The linger deadline passed.
                         self->Discard();
                       });
  }

  // The next request on a kept-alive connection. A receive right after a
  // response finds nothing: the client is still reading the answer. Waiting
  // for the socket to become readable first spares that receive: 6% of an
  // I/O thread's time for single-event publishes, against 4% for the wait.
  // Bytes already read (a pipelined request) are parsed at once: no
  // readiness would come for them. Bytes that arrived while no operation
  // was pending are found: a wait re-arms the socket in epoll
  // (EPOLL_CTL_MOD, which reports readiness that is already there; Asio's
  // epoll reactor, Boost 1.81).
  void AwaitRequest() {
    ArmDeadline();
    StartRequest();
    if (buffer_.size() > 0) return ReadRequest();
    WaitReadable();
  }

  // Beast reads at most the buffer's free space (at least 512 bytes), and
  // the parser consumes a body as it arrives, so the buffer never grows by
  // itself: a 15 KB batch took some 30 reads. A kept-alive connection that
  // sent a request larger than its buffer gets room for the next one of
  // that size, up to kFittedReadBytes (a buffer an idle connection keeps).
  void FitBuffer(size_t request_bytes) {
    if (request_bytes <= buffer_.capacity()) return;
    buffer_.reserve(std::min(std::bit_ceil(request_bytes), kFittedReadBytes));
  }

  void TrimBuffers() {
    if (out_.capacity() > kKeptBufferBytes) std::string().swap(out_);
    request_.Clear();  // Answered: what a large one held goes back now, not at the next.
    if (buffer_.size() == 0 && buffer_.capacity() > kKeptBufferBytes) buffer_.shrink_to_fit();
  }

  void Close() {
    StopIdleTimer();
    beast::error_code ignored;
    socket_.shutdown(net::ip::tcp::socket::shutdown_send, ignored);
  }

  // The timer's handler holds the session: cancelling it lets the session
  // go as soon as its last operation ends.
  void StopIdleTimer() {
    open_ = false;
    idle_timer_.cancel();
  }

  HttpSocket socket_;
  Timer idle_timer_;
  beast::flat_buffer buffer_;
  std::string out_;  // The response being written (one write in flight).
  std::optional<RequestParser> parser_;
  size_t request_bytes_ = 0;  // Of the request being read, parsed so far.
  std::shared_ptr<ServerState> state_;
  PublishCoalescer& publishes_;
  const Clock::duration idle_timeout_;
  std::string client_;  // The peer's address, when a rate limit needs it.
  Clock::time_point deadline_ = Clock::time_point::max();  // Of the socket operation pending.
  bool open_ = true;  // Until closed or handed to an SSE session.
  bool keep_alive_ = true;
  bool linger_ = false;        // The request was refused before it was read to its end.
  size_t lingered_bytes_ = 0;  // Discarded by the lingering close.
  absl::Time started_;
  std::string request_line_;  // "METHOD target", for the request log.
  HttpRequest request_;       // The one being answered (reused: RequestParser).
};

}  // namespace

void StartHttpSession(HttpSocket socket, std::shared_ptr<ServerState> state,
                      PublishCoalescer& publishes, std::string client) {
  std::make_shared<HttpSession>(std::move(socket), std::move(state), publishes,
                                std::move(client))
      ->Run();
}

}  // namespace keel::server
