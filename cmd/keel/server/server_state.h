// Internal: what every session of one Server shares.
#ifndef KEEL_CMD_KEEL_SERVER_SERVER_STATE_H_
#define KEEL_CMD_KEEL_SERVER_SERVER_STATE_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include <boost/asio/thread_pool.hpp>

#include "keel/cmd/keel/server/api.h"
#include "keel/cmd/keel/server/request_gate.h"
#include "keel/cmd/keel/server/server.h"
#include "keel/core/logger.h"

namespace keel::server {

class SseThreads;

struct ServerState {
  ServerState(ServerOptions options, Api& api, std::shared_ptr<Logger> logger)
      : id(NextId()),
        options(std::move(options)),
        api(api),
        logger(std::move(logger)),
        blocking(this->options.blocking_threads),
        gate(this->options.authenticator, this->options.rate_limit, this->options.rate_burst,
             this->options.token_limits) {}

  // Tells servers (and so buses) apart in per-thread caches; never 0.
  const uint64_t id;
  const ServerOptions options;
  Api& api;
  const std::shared_ptr<Logger> logger;
  boost::asio::thread_pool blocking;
  RequestGate gate;  // Rate limit and tokens, checked before a request is served.
  // SSE sessions move here once subscribed; owned and run by the Server.
  SseThreads* sse = nullptr;
  std::atomic<bool> draining{false};
  std::atomic<int> requests_in_flight{0};
  std::atomic<int> sse_sessions{0};
  // Passes of publishes committed through PublishBatchAsync and not yet
  // answered: Stop() keeps the I/O threads until they are, as their answers
  // come back through them (the bus may still be committing when the grace
  // period ended).
  std::atomic<int> async_passes{0};

 private:
  static uint64_t NextId() {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1);
  }
};

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_SERVER_STATE_H_
