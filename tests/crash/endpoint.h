// Endpoint: where the daemon under test listens now. A restart keeps the
// port when it can be bound again, and moves to a new one when it cannot;
// clients built through EndpointClient follow it.
#ifndef KEEL_TESTS_CRASH_ENDPOINT_H_
#define KEEL_TESTS_CRASH_ENDPOINT_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "keel/cmd/keel/client/http_client.h"

namespace keel::crash_test {

// How long a client waits between attempts while the daemon is down.
inline constexpr absl::Duration kRetryWait = absl::Milliseconds(20);

class Endpoint {
 public:
  uint16_t port() const { return port_.load(); }
  // Counts the daemon's starts: a client that sees it change knows the
  // daemon was killed and started again since it last looked.
  int starts() const { return starts_.load(); }

  void Started(uint16_t port) {
    port_.store(port);
    starts_.fetch_add(1);
  }

 private:
  std::atomic<uint16_t> port_{0};
  std::atomic<int> starts_{0};
};

// One thread's HTTP client of the daemon, rebuilt when the daemon moved.
class EndpointClient {
 public:
  explicit EndpointClient(const Endpoint& endpoint) : endpoint_(endpoint) {}

  client::HttpClient& http() {
    const uint16_t port = endpoint_.port();
    if (http_ == nullptr || http_->port() != port) {
      client::ClientOptions options;
      options.connect_timeout = absl::Seconds(2);
      // A killed daemon ends the connection at once; this bounds only a hang.
      options.request_timeout = absl::Seconds(30);
      http_ = std::make_unique<client::HttpClient>("127.0.0.1", port, options);
    }
    return *http_;
  }

 private:
  const Endpoint& endpoint_;
  std::unique_ptr<client::HttpClient> http_;
};

}  // namespace keel::crash_test

#endif  // KEEL_TESTS_CRASH_ENDPOINT_H_
