// Server: the daemon's HTTP/1.1 + SSE front end on Boost.Beast.
//
// I/O threads run the request/response sessions (one write in flight per
// connection, bounded buffers), each on an I/O context of its own;
// connections are handed to them in turn. The publishes one I/O thread reads
// in one pass are committed together (PublishCoalescer). SSE sessions run on I/O threads of
// their own (`sse_threads`), so that a publish's response never waits in
// the same queue as the fan-out of thousands of SSE writes. Handlers that may block — publishes waiting for
// their group commit and fsync, store reads — run on a separate blocking
// pool so that slow disks never stall the I/O threads. SSE connections are
// long-lived sessions fed by a Subscription (core/subscription.h): a slow
// client's subscription falls back to catch-up reads, so memory stays
// bounded and nothing is lost. Caught-up sessions of one stream share one
// subscription and their writes' frames per SSE thread (sse_broadcast.h).
//
// Shutdown is in stages so the daemon can close the bus in between:
// StopAccepting() + DrainRequests() (in-flight requests finish, new ones on
// kept-alive connections get 503), then the caller closes the bus (SSE
// subscriptions end after their queued events), then Stop() waits for SSE
// sessions to flush and stops the threads.
//
// Thread safety: Start/StopAccepting/DrainRequests/Stop from one control
// thread.
#ifndef KEEL_CMD_KEEL_SERVER_SERVER_H_
#define KEEL_CMD_KEEL_SERVER_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "keel/cmd/keel/server/api.h"
#include "keel/cmd/keel/server/request_gate.h"
#include "keel/core/logger.h"

namespace keel::server {

// Half the CPUs this process may run on, at least 1: the SSE threads'
// writes are mostly the kernel's TCP send path, and more of them than that
// take the cores the request threads and the store need. At 10,000
// connections on two vCPUs, one SSE thread gave a lower fan-out latency
// than two.
int DefaultSseThreads();

class Authenticator;
class ServerTls;

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;  // 0 picks a free port (see Server::port()).
  int io_threads = 2;
  int sse_threads = DefaultSseThreads();  // I/O threads serving SSE connections only.
  int blocking_threads = 64;
  size_t body_limit = 1 << 20;
  size_t header_limit = 16 << 10;
  absl::Duration idle_timeout = absl::Seconds(60);
  absl::Duration sse_keepalive = absl::Seconds(15);
  absl::Duration sse_retry = absl::Seconds(1);
  // Least time between two writes of live events to one SSE connection
  // (events arriving in between leave together); 0 writes as they come.
  // With thousands of connections the kernel's cost per write sets the
  // latency: 100 ms (rather than 50) halves the writes, and at 10,000
  // connections on two vCPUs it gave the lower p99.
  absl::Duration sse_flush = absl::Milliseconds(100);
  // Events per SSE poll: a write carries up to this many (plus, while
  // catching up, one page read ahead).
  size_t sse_batch = 256;
  // Events all SSE sessions together may hold as frames (a batch being
  // written and one read ahead each): with many connections a poll takes
  // fewer than `sse_batch` (at least 16), so that thousands of lagging
  // sessions catching up from the store do not each buffer two full pages.
  size_t sse_buffer_events = 1'000'000;
  // Recent events a stream's shared SSE writer keeps for the connections it
  // serves (cmd/keel/server/sse_broadcast.h); a connection further behind
  // catches up on its own, from the stream's tail or the store.
  size_t sse_window = 4096;
  // Commit publishes on the I/O thread instead of the blocking pool (unless
  // the bodies gathered in one pass are large): for a bus whose publishes
  // never wait for a disk (memory store, sync=none), where the two thread
  // hops cost more than the publish.
  bool inline_publishes = false;
  std::string cors_origin = "*";  // Access-Control-Allow-Origin; empty = none.
  // Checks the bearer tokens requests must carry (RequestGate): static
  // tokens, JWTs; null serves requests without one. Not const: its owner
  // may Reload it while the server runs.
  std::shared_ptr<Authenticator> authenticator;
  // Serves TLS instead of plain HTTP when set (tls_session.h); its owner
  // may Reload it while the server runs.
  std::shared_ptr<ServerTls> tls;
  // Requests per second a client (by address) may send on average; 0 for no
  // limit. `rate_burst` is how many it may send at once; 0 takes one
  // second's worth (at least 1).
  double rate_limit = 0;
  double rate_burst = 0;
  // Per token (per client address when no credentials are checked): publish
  // requests per second and at once, open SSE streams; and open SSE
  // streams in all. 0 for no limit (RequestGate).
  TokenLimits token_limits;
  // The least rate_limit other than 0: one request per ~12 days.
  static constexpr double kLeastRateLimit = 1e-6;
  absl::Duration trim_interval = absl::Seconds(1);  // How often to look for retention work.
  size_t trim_budget = 10'000;                       // Records per Trim call.
};

// Refuses options the server cannot run with: fewer than one thread of a
// kind, a negative rate limit or a burst below one request, or a
// cors_origin with a control character (it is written into every
// response head, where CR/LF would add headers of its own). Server::Start
// checks them; a command line may check first to answer a usage error.
absl::Status ValidateServerOptions(const ServerOptions& options);

class Server {
 public:
  Server(ServerOptions options, Api& api, std::shared_ptr<Logger> logger);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and starts the threads. kUnavailable when the address is taken;
  // kInvalidArgument for options ValidateServerOptions refuses.
  absl::Status Start();
  uint16_t port() const;

  void StopAccepting();
  // Waits until no request is in flight; false on timeout.
  bool DrainRequests(absl::Duration timeout);
  // Waits for SSE sessions to end (close the bus first), then stops.
  void Stop(absl::Duration timeout);

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_SERVER_H_
