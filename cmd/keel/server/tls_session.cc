#include "keel/cmd/keel/server/tls_session.h"

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include "absl/time/time.h"
#include "keel/cmd/keel/server/client_key.h"

namespace keel::server {
namespace {

namespace net = boost::asio;
namespace ssl = net::ssl;
using error_code = boost::system::error_code;
using Executor = HttpSocket::executor_type;
using LocalSocket = net::basic_stream_socket<net::local::stream_protocol, Executor>;
using Timer = net::basic_waitable_timer<std::chrono::steady_clock,
                                        net::wait_traits<std::chrono::steady_clock>, Executor>;

// A handshake, and the end of a connection (close_notify, then discarding
// what the client still sends), take at most this long, and never longer
// than the idle timeout.
constexpr std::chrono::seconds kStepTime{5};
// A lingering close discards at most this much.
constexpr size_t kLingerBytes = 64 * 1024 * 1024;
// Bytes copied per read, each way.
constexpr size_t kChunkBytes = 16 * 1024;

class TlsSession : public std::enable_shared_from_this<TlsSession> {
 public:
  TlsSession(HttpSocket socket, std::shared_ptr<ssl::context> context,
             std::shared_ptr<ServerState> state, PublishCoalescer& publishes)
      : context_(std::move(context)),
        tls_(std::move(socket), *context_),
        plain_(tls_.get_executor()),
        timer_(tls_.get_executor()),
        state_(std::move(state)),
        publishes_(publishes),
        step_time_(std::min<std::chrono::steady_clock::duration>(
            kStepTime, absl::ToChronoNanoseconds(state_->options.idle_timeout))) {}

  void Start() {
    error_code ec;
    const auto peer = tls_.next_layer().remote_endpoint(ec);
    if (!ec) client_ = RateLimitKey(peer.address());
    ArmTimer();
    tls_.async_handshake(ssl::stream_base::server,
                         [self = shared_from_this()](error_code ec) { self->OnHandshake(ec); });
  }

 private:
  // Closes the TCP connection when the current step takes too long.
  void ArmTimer() {
    timer_.expires_after(step_time_);
    timer_.async_wait([self = shared_from_this()](error_code ec) {
      if (!ec) self->CloseTcp();
    });
  }

  void OnHandshake(const error_code& ec) {
    timer_.cancel();
    if (ec) return CloseTcp();  // Not TLS, a certificate refused, or too slow.
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return CloseTcp();
    HttpSocket inner(tls_.get_executor());
    error_code assigned;
    inner.assign(net::ip::tcp::v4(), fds[0], assigned);
    if (assigned) ::close(fds[0]);
    plain_.assign(net::local::stream_protocol(), fds[1], assigned);
    if (assigned) {
      ::close(fds[1]);
      return CloseTcp();
    }
    inner.non_blocking(true, assigned);  // The session writes directly (SendNow).
    StartHttpSession(std::move(inner), state_, publishes_, client_);
    ReadTls();
    ReadPlain();
  }

  // Client → session.
  void ReadTls() {
    client_side_ = ClientSide::kReading;
    tls_.async_read_some(net::buffer(from_client_),
                         [self = shared_from_this()](error_code ec, size_t n) {
                           self->client_side_ = ClientSide::kCopying;
                           if (self->ending_) return self->EndTls();
                           if (ec) return self->OnClientGone();
                           net::async_write(self->plain_, net::buffer(self->from_client_, n),
                                            [self](error_code ec, size_t) {
                                              if (self->ending_) return self->EndTls();
                                              if (ec) return self->Abort();
                                              self->ReadTls();
                                            });
                         });
  }

  // Session → client.
  void ReadPlain() {
    plain_.async_read_some(net::buffer(to_client_), [self = shared_from_this()](error_code ec,
                                                                                size_t n) {
      if (ec) return self->OnSessionEnded();
      net::async_write(self->tls_, net::buffer(self->to_client_, n), [self](error_code ec, size_t) {
        if (ec) return self->Abort();
        self->ReadPlain();
      });
    });
  }

  // The client closed or broke the connection: the session sees the end of
  // its input and ends; a response still on its way has nowhere to go.
  void OnClientGone() {
    client_side_ = ClientSide::kGone;
    error_code ignored;
    plain_.shutdown(net::socket_base::shutdown_send, ignored);
  }

  // The session is done: stop copying the client's bytes (cancelling the
  // read in progress), then end TLS.
  void OnSessionEnded() {
    ending_ = true;
    error_code ignored;
    switch (client_side_) {
      case ClientSide::kReading:  // Its completion ends TLS.
        tls_.next_layer().cancel(ignored);
        return;
      case ClientSide::kCopying:  // So does the copy's.
        return;
      case ClientSide::kGone:
        plain_.close(ignored);
        return CloseTcp();
    }
  }

  // Sends close_notify and waits for the client's, then closes; a client
  // that sends data instead gets a lingering close.
  void EndTls() {
    error_code ignored;
    plain_.close(ignored);
    ArmTimer();
    tls_.async_shutdown([self = shared_from_this()](error_code ec) {
      if (!ec || ec == net::error::eof || ec == ssl::error::stream_truncated) {
        self->timer_.cancel();
        return self->CloseTcp();
      }
      self->Linger();
    });
  }

  void Linger() {
    error_code ignored;
    tls_.next_layer().shutdown(net::socket_base::shutdown_send, ignored);
    ArmTimer();
    Discard();
  }

  void Discard() {
    tls_.next_layer().async_read_some(net::buffer(from_client_),
                                      [self = shared_from_this()](error_code ec, size_t n) {
                                        self->lingered_ += n;
                                        if (ec || self->lingered_ >= kLingerBytes) {
                                          self->timer_.cancel();
                                          return self->CloseTcp();
                                        }
                                        self->Discard();
                                      });
  }

  void Abort() {
    error_code ignored;
    plain_.close(ignored);
    CloseTcp();
  }

  void CloseTcp() {
    error_code ignored;
    tls_.next_layer().close(ignored);
  }

  const std::shared_ptr<ssl::context> context_;  // Outlives tls_, which uses it.
  ssl::stream<HttpSocket> tls_;
  LocalSocket plain_;  // The end the HTTP session's socket is paired with.
  Timer timer_;
  const std::shared_ptr<ServerState> state_;
  PublishCoalescer& publishes_;
  const std::chrono::steady_clock::duration step_time_;
  std::string client_;  // The peer as the rate limit counts it.
  std::array<char, kChunkBytes> from_client_;
  std::array<char, kChunkBytes> to_client_;
  // What the client → session direction is doing.
  enum class ClientSide { kReading, kCopying, kGone };
  ClientSide client_side_ = ClientSide::kReading;
  bool ending_ = false;  // The session ended: TLS ends next.
  size_t lingered_ = 0;
};

}  // namespace

void StartTlsSession(HttpSocket socket, std::shared_ptr<ssl::context> context,
                     std::shared_ptr<ServerState> state, PublishCoalescer& publishes) {
  std::make_shared<TlsSession>(std::move(socket), std::move(context), std::move(state), publishes)
      ->Start();
}

}  // namespace keel::server
