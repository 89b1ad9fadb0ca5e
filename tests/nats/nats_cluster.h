// NatsCluster: real nats-server processes with JetStream for the jetstream
// driver's tests and for `keel-bench jetstream`, on free loopback ports with
// their stores in a given directory: one standalone server, or a cluster of
// several nodes routed to each other. It uses no test framework, so the
// benchmark program links it too.
// Nodes can be killed (SIGKILL) and restarted on the same ports and store.
// Servers do not advertise each other to clients: a client reconnects only
// to the URLs it was given.
//
// Thread safety: not thread-safe; one test (or benchmark) drives it.
#ifndef KEEL_TESTS_NATS_NATS_CLUSTER_H_
#define KEEL_TESTS_NATS_NATS_CLUSTER_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace keel::jetstream::testing {

// What clients need to get in: nothing by default.
struct NatsAccess {
  std::string token = "";  // Clients must authenticate with it.
  // The servers speak TLS only, with this certificate and key (PEM);
  // clients verify them with `tls_ca`.
  std::string tls_cert = "";
  std::string tls_key = "";
  std::string tls_ca = "";
};

// The nats-server program: on $PATH, else in /usr/sbin or /usr/local/sbin
// (where Debian and source installs put it, often outside a user's PATH);
// "" when there is none.
std::string FindNatsServer();

class NatsCluster {
 public:
  // Starts `nodes` servers (1: standalone) and waits until JetStream answers
  // on each. kNotFound without nats-server (FindNatsServer), kUnavailable
  // when they do not come up (their logs are in `dir`). A node that cannot
  // bind its ports (taken since they were picked) starts the cluster again
  // on new ones, up to three times.
  // `access` says what clients need to connect.
  static absl::StatusOr<std::unique_ptr<NatsCluster>> Start(int nodes, const std::string& dir,
                                                            const NatsAccess& access = {});
  ~NatsCluster();  // Kills every node.
  NatsCluster(const NatsCluster&) = delete;
  NatsCluster& operator=(const NatsCluster&) = delete;

  int size() const { return static_cast<int>(nodes_.size()); }
  // Every node's client URL, comma-separated (the driver's `servers`).
  std::string servers() const;
  std::string url(int node) const;
  bool running(int node) const { return nodes_[node].pid > 0; }

  // SIGKILL: the node stops at once, as in a crash.
  void Kill(int node);
  // Starts a killed node again with its configuration and store.
  absl::Status Restart(int node);
  // Waits until every running node answers JetStream requests (connecting
  // as `access` says).
  absl::Status WaitReady(absl::Duration timeout = absl::Seconds(30));
  // The index of the node that leads JetStream stream `stream`.
  absl::StatusOr<int> LeaderOf(const std::string& stream,
                               absl::Duration timeout = absl::Seconds(30));

 private:
  struct Node {
    std::string name;
    int client_port = 0;
    int cluster_port = 0;
    std::string config_file;
    std::string log_file;
    pid_t pid = -1;
    std::uintmax_t log_offset = 0;  // The log's size when it was last launched.
  };

  NatsCluster() = default;
  // Picks ports for `nodes` nodes, writes their configurations and starts
  // them.
  absl::Status LaunchOnFreshPorts(int nodes);
  void WriteConfig(const Node& node) const;
  absl::Status Launch(Node& node);

  std::string program_;  // nats-server.
  std::string dir_;
  NatsAccess access_;
  std::vector<Node> nodes_;
};

}  // namespace keel::jetstream::testing

#endif  // KEEL_TESTS_NATS_NATS_CLUSTER_H_
