#include "keel/cmd/keel/server/server.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/server_state.h"
#include "keel/cmd/keel/server/server_tls.h"
#include "keel/cmd/keel/server/sessions.h"
#include "keel/cmd/keel/server/sse_threads.h"
#include "keel/cmd/keel/server/tls_session.h"
#include "keel/cmd/keel/server/trimmer.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::server {

namespace net = boost::asio;
using tcp = net::ip::tcp;

class Server::Impl {
 public:
  Impl(ServerOptions options, Api& api, std::shared_ptr<Logger> logger)
      : sse_(options.sse_threads),
        state_(std::make_shared<ServerState>(std::move(options), api, std::move(logger))),
        io_(MakeIoThreads(*state_)),
        acceptor_(io_.front()->context) {
    state_->sse = &sse_;
  }

  ~Impl() {
    if (!threads_.empty()) Stop(absl::ZeroDuration());
  }

  absl::Status Start() {
    KEEL_RETURN_IF_ERROR(ValidateServerOptions(state_->options));
    boost::system::error_code ec;
    tcp::endpoint endpoint(net::ip::make_address(state_->options.host, ec),
                           state_->options.port);
    if (ec) return InvalidArgument(absl::StrCat("bad listen host '", state_->options.host, "'"));
    if (acceptor_.open(endpoint.protocol(), ec); ec) return Failed("open", ec);
    acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (acceptor_.bind(endpoint, ec); ec) return Failed("bind", ec);
    if (acceptor_.listen(net::socket_base::max_listen_connections, ec); ec) {
      return Failed("listen", ec);
    }
    port_ = acceptor_.local_endpoint().port();
    DoAccept();
    StartTrimmer(io_.front()->context, state_);
    for (auto& io : io_) threads_.emplace_back([&context = io->context] { context.run(); });
    sse_.Run(threads_);
    return absl::OkStatus();
  }

  uint16_t port() const { return port_; }

  void StopAccepting() {
    state_->draining.store(true);
    net::post(acceptor_.get_executor(), [this] {
      boost::system::error_code ignored;
      acceptor_.close(ignored);
    });
  }

  bool DrainRequests(absl::Duration timeout) {
    return WaitUntil([this] { return state_->requests_in_flight.load() == 0; }, timeout);
  }

  void Stop(absl::Duration timeout) {
    if (!WaitUntil([this] { return state_->sse_sessions.load() == 0; }, timeout)) {
      state_->logger->Warn(absl::StrCat("keel daemon: ", state_->sse_sessions.load(),
                                        " SSE sessions still open at shutdown; dropping them"));
    }
    // Unbounded, like the blocking pool's join below: a commit ends.
    WaitUntil([this] { return state_->async_passes.load() == 0; }, absl::InfiniteDuration());
    for (auto& io : io_) {
      io->work.reset();
      io->context.stop();
    }
    sse_.Stop();
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
    state_->blocking.join();
  }

 private:
  absl::Status Failed(absl::string_view what, const boost::system::error_code& ec) {
    return Unavailable(absl::StrCat("cannot ", what, " ", state_->options.host, ":",
                                    state_->options.port, ": ", ec.message()));
  }

  template <typename Done>
  static bool WaitUntil(Done done, absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    while (!done()) {
      if (absl::Now() >= deadline) return false;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return true;
  }

  // Connections go to the I/O threads in turn.
  void DoAccept() {
    IoThread& io = *io_[next_io_++ % io_.size()];
    acceptor_.async_accept(io.context, [this, &io](boost::system::error_code ec,
                                                   HttpSocket socket) {
      if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
      if (!ec) {
        socket.set_option(tcp::no_delay(true), ec);  // Best effort.
        // For the sessions' direct writes (SendNow); without it, the
        // connection is dropped.
        socket.non_blocking(true, ec);
        if (!ec && state_->options.tls != nullptr) {
          StartTlsSession(std::move(socket), state_->options.tls->Current(), state_, io.publishes);
        } else if (!ec) {
          StartHttpSession(std::move(socket), state_, io.publishes);
        }
      }
      DoAccept();
    });
  }

  // One I/O context per thread: a handler's posts stay on its own thread,
  // and no thread is woken to run work another thread queued (with one
  // context shared by two threads, that cost two futex calls per request).
  // A connection's handlers all run on its context's one thread, so they
  // never run concurrently and need no strand.
  struct IoThread {
    explicit IoThread(ServerState& state)
        : context(1),
          work(net::make_work_guard(context)),
          publishes(state.api, context, state.blocking, state.options.inline_publishes,
                    state.async_passes) {}
    net::io_context context;
    // Keeps the thread running while no socket operation is pending, e.g.
    // when the only requests wait on the blocking pool after accepting
    // stopped.
    net::executor_work_guard<net::io_context::executor_type> work;
    PublishCoalescer publishes;
  };

  static std::vector<std::unique_ptr<IoThread>> MakeIoThreads(ServerState& state) {
    std::vector<std::unique_ptr<IoThread>> io;
    for (int i = 0; i < std::max(1, state.options.io_threads); ++i) {
      io.push_back(std::make_unique<IoThread>(state));
    }
    return io;
  }

  // First member, so it is destroyed last: SSE sessions still queued on its
  // contexts at shutdown hold the state.
  SseThreads sse_;
  std::shared_ptr<ServerState> state_;
  std::vector<std::unique_ptr<IoThread>> io_;
  size_t next_io_ = 0;  // Used on the acceptor's thread only.
  tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::vector<std::thread> threads_;
};

Server::Server(ServerOptions options, Api& api, std::shared_ptr<Logger> logger)
    : impl_(std::make_unique<Impl>(std::move(options), api, std::move(logger))) {}

Server::~Server() = default;

int DefaultSseThreads() {
  // The CPUs of the process's affinity mask (taskset, cpusets), not all the
  // machine's.
  cpu_set_t cpus;
  const int count = sched_getaffinity(0, sizeof(cpus), &cpus) == 0
                        ? CPU_COUNT(&cpus)
                        : static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, count / 2);
}

absl::Status ValidateServerOptions(const ServerOptions& options) {
  if (options.io_threads < 1 || options.blocking_threads < 1 || options.sse_threads < 1) {
    return InvalidArgument("the I/O, SSE and blocking thread counts must be >= 1");
  }
  if (std::any_of(options.cors_origin.begin(), options.cors_origin.end(),
                  [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
    return InvalidArgument("the CORS origin must not contain control characters");
  }
  if (!(options.rate_limit == 0 || options.rate_limit >= ServerOptions::kLeastRateLimit) ||
      !std::isfinite(options.rate_limit)) {
    return InvalidArgument(absl::StrCat(
        "the rate limit must be 0 (none) or at least ", ServerOptions::kLeastRateLimit, " requests per second"));
  }
  if (!(options.rate_burst == 0 || options.rate_burst >= 1) || !std::isfinite(options.rate_burst)) {
    return InvalidArgument("the rate burst must be at least 1 request (or 0 for one second's worth)");
  }
  const TokenLimits& limits = options.token_limits;
  if (!(limits.publish_rate == 0 || limits.publish_rate >= ServerOptions::kLeastRateLimit) ||
      !std::isfinite(limits.publish_rate)) {
    return InvalidArgument(absl::StrCat("the publish rate per token must be 0 (none) or at least ",
                                        ServerOptions::kLeastRateLimit, " per second"));
  }
  if (!(limits.publish_burst == 0 || limits.publish_burst >= 1) ||
      !std::isfinite(limits.publish_burst)) {
    return InvalidArgument(
        "the publish burst per token must be at least 1 (or 0 for one second's worth)");
  }
  return absl::OkStatus();
}

absl::Status Server::Start() { return impl_->Start(); }
uint16_t Server::port() const { return impl_->port(); }
void Server::StopAccepting() { impl_->StopAccepting(); }
bool Server::DrainRequests(absl::Duration timeout) { return impl_->DrainRequests(timeout); }
void Server::Stop(absl::Duration timeout) { impl_->Stop(timeout); }

}  // namespace keel::server
