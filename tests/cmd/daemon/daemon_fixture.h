// Test support for the daemon tests: an in-process daemon (bus + Api +
// Server on a loopback port, wired like `keel daemon`), a spawned `keel
// daemon` process, and small helpers over the HTTP client.
#ifndef KEEL_TESTS_CMD_DAEMON_DAEMON_FIXTURE_H_
#define KEEL_TESTS_CMD_DAEMON_DAEMON_FIXTURE_H_

#include <sys/types.h>

#include <csignal>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <boost/json.hpp>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/cmd/keel/client/sse_reader.h"
#include "keel/cmd/keel/server/api.h"
#include "keel/cmd/keel/server/metrics.h"
#include "keel/cmd/keel/server/server.h"
#include "keel/core/config.h"
#include "keel/core/event_bus.h"
#include "keel/tests/testing/temp_dir.h"

namespace keel::daemon_test {

namespace json = boost::json;

// Generous bound for anything the tests wait for (no timing assertions).
inline constexpr absl::Duration kWait = absl::Seconds(60);

struct DaemonOptions {
  std::string driver = "durable";
  // Driver options. For "durable", store=leveldb and store.path=<temp dir>
  // are added unless `degraded` is set (no store: runs degraded on memory).
  Config config;
  bool degraded = false;
  server::ServerOptions server;  // port 0, short keepalive/retry by default.
  // Optional: wraps the created bus (e.g. to hold publishes at a gate).
  std::function<std::unique_ptr<EventBus>(std::unique_ptr<EventBus>)> wrap_bus;
  // Optional: the server's logger (e.g. a CapturingLogger); default spdlog's.
  std::shared_ptr<Logger> logger;

  DaemonOptions();
};

// bus + Api + Server, as `keel daemon` wires them (metrics hooked to the
// driver's store writes). Restart() closes everything like a graceful
// shutdown and reopens on the same data directory and port.
class InProcessDaemon {
 public:
  explicit InProcessDaemon(DaemonOptions options = {});
  ~InProcessDaemon();

  absl::Status Start();
  // Graceful stop, in the daemon's order; the bus is closed.
  void Stop();
  absl::Status Restart();

  uint16_t port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  EventBus& bus() { return *bus_; }
  server::Api& api() { return *api_; }
  server::Server& server() { return *server_; }
  server::Metrics& metrics() { return *metrics_; }
  const std::string& data_dir() const { return data_dir_; }

  // A new client of this daemon.
  std::unique_ptr<client::HttpClient> NewClient() const;
  absl::StatusOr<std::unique_ptr<client::SseReader>> OpenSse(client::SseOptions options) const;

 private:
  DaemonOptions options_;
  testing::TempDir dir_;
  std::string data_dir_;
  uint16_t port_ = 0;
  std::unique_ptr<server::Metrics> metrics_;
  std::unique_ptr<EventBus> bus_;
  std::unique_ptr<server::Api> api_;
  std::unique_ptr<server::Server> server_;
};

// A `keel daemon` child process (KEEL_BINARY) on 127.0.0.1.
class DaemonProcess {
 public:
  DaemonProcess(std::string data_dir, std::string log_dir);
  ~DaemonProcess();  // SIGKILLs a still running child.

  // Starts `keel daemon --listen 127.0.0.1:<port> --port-file F --data-dir D
  // <extra>` and waits for the port file.
  absl::Status Start(uint16_t port = 0, std::vector<std::string> extra = {});
  // Sends `signal` (SIGTERM or SIGINT: both shut down gracefully), then
  // waits for the exit; returns the exit code (-1 when it did not exit
  // normally).
  absl::StatusOr<int> Terminate(int signal = SIGTERM);
  // Sends `signal` (SIGHUP, say) and returns at once.
  absl::Status Signal(int signal);
  uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }  // -1 when not running.
  bool running() const { return pid_ > 0; }
  std::string Logs() const;

 private:
  std::string data_dir_;
  std::string log_dir_;
  int starts_ = 0;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
};

// --- Helpers ---------------------------------------------------------------

struct PublishedEvent {
  uint64_t sequence = 0;
  std::string cursor;
  std::string id;
  bool duplicate = false;
};

// POSTs `body` to /v1/streams/{stream}/events as JSON.
absl::StatusOr<client::ClientResponse> PostEvents(client::HttpClient& http,
                                                  const std::string& stream,
                                                  const std::string& body,
                                                  client::Headers headers = {});
// Publishes one event {"type", "data", "tenant"?}; fails unless 201.
absl::StatusOr<PublishedEvent> Publish(client::HttpClient& http, const std::string& stream,
                                       const std::string& type, const std::string& data_json,
                                       const std::string& tenant = "");
absl::StatusOr<json::value> GetJson(client::HttpClient& http, const std::string& target);
// Polls `stream`'s bounds until the daemon's trimmer has moved its oldest
// event to at least `first_sequence` or `timeout` passed; the last bounds.
absl::StatusOr<json::object> AwaitTrimmed(client::HttpClient& http, const std::string& stream,
                                          uint64_t first_sequence,
                                          absl::Duration timeout = absl::Seconds(10));

// Everything `bus` holds, as (stream, first, last, count) of every stream:
// compared before and after a refused request, it shows nothing was stored.
using StoreSnapshot = std::vector<std::tuple<std::string, uint64_t, uint64_t, uint64_t>>;
StoreSnapshot SnapshotOf(EventBus& bus);

// The JSON error code and the HTTP status of a response.
std::string ErrorCode(const client::ClientResponse& response);

// Reads event frames (frames with data) until `count` were read; fails on
// a broken stream or when `timeout` passes without progress.
absl::StatusOr<std::vector<client::SseFrame>> ReadEvents(client::SseReader& reader, size_t count,
                                                         absl::Duration timeout = kWait);

// The value of an unlabelled metric in Prometheus text, -1 when absent.
double MetricValue(const std::string& text, const std::string& name);

// The parsed `data:` of an event frame.
json::object FrameJson(const client::SseFrame& frame);
uint64_t FrameSequence(const client::SseFrame& frame);
// FrameSequence of each frame.
std::vector<uint64_t> SequencesOf(const std::vector<client::SseFrame>& frames);

// Every event of a stream via paged GETs (limit 1000).
absl::StatusOr<std::vector<json::object>> ReplayAll(client::HttpClient& http,
                                                    const std::string& stream);

// 1..n or first..last as a vector.
std::vector<uint64_t> Range(uint64_t first, uint64_t last);

}  // namespace keel::daemon_test

#endif  // KEEL_TESTS_CMD_DAEMON_DAEMON_FIXTURE_H_
