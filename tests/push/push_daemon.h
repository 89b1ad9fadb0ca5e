// PushDaemon: bus (durable, on a temporary directory) + Api + Server +
// PushService on a loopback port, wired as `keel daemon` wires them, for
// the push tests. Restart() shuts down like the daemon does and reopens on
// the same data and port. Also helpers to read what a TestReceiver got.
#ifndef KEEL_TESTS_PUSH_PUSH_DAEMON_H_
#define KEEL_TESTS_PUSH_PUSH_DAEMON_H_

#include <boost/json.hpp>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/cmd/keel/server/api.h"
#include "keel/cmd/keel/server/metrics.h"
#include "keel/cmd/keel/server/push/push_service.h"
#include "keel/cmd/keel/server/server.h"
#include "keel/core/event_bus.h"
#include "keel/core/logger.h"
#include "keel/tests/push/test_receiver.h"
#include "keel/tests/testing/temp_dir.h"

namespace keel::push_test {

namespace json = boost::json;

// Generous bound for what the tests wait for (no timing assertions).
inline constexpr absl::Duration kWait = absl::Seconds(60);

class PushDaemon {
 public:
  PushDaemon();
  ~PushDaemon();

  absl::Status Start();
  void Stop();
  // The CAs https endpoints must chain to, from the next Start on (the
  // daemon's --push-ca-file).
  void set_push_ca_file(std::string ca_file) { push_ca_file_ = std::move(ca_file); }
  absl::Status Restart();

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::unique_ptr<client::HttpClient> NewClient() const;
  EventBus& bus() { return *bus_; }

 private:
  testing::TempDir dir_;
  uint16_t port_ = 0;
  std::string push_ca_file_;
  std::shared_ptr<Logger> logger_;
  std::unique_ptr<server::Metrics> metrics_;
  std::unique_ptr<EventBus> bus_;
  std::unique_ptr<server::Api> api_;
  std::unique_ptr<push::PushService> push_;
  std::unique_ptr<server::Server> server_;
};

// POST /v1/subscriptions with `declaration`; the response.
absl::StatusOr<client::ClientResponse> CreateSubscription(client::HttpClient& http,
                                                          const json::object& declaration);
// Publishes an event of `type` with data {"n": n}; its id.
absl::StatusOr<std::string> PublishN(client::HttpClient& http, const std::string& stream,
                                     const std::string& type, int n);

// A delivered event as the receiver saw it.
struct Delivered {
  std::string stream;
  uint64_t sequence = 0;
  std::string id;
  int n = 0;  // data.n
};
// The events of one request body, in order.
std::vector<Delivered> EventsOf(const ReceivedRequest& request);
// The events of every request the receiver acknowledged (2xx), in order.
std::vector<Delivered> Acknowledged(const std::vector<ReceivedRequest>& requests);
// The acknowledged sequences of `stream`, in delivery order.
std::vector<uint64_t> SequencesOf(const std::vector<Delivered>& events, const std::string& stream);

}  // namespace keel::push_test

#endif  // KEEL_TESTS_PUSH_PUSH_DAEMON_H_
