#include "keel/tests/nats/nats_cluster.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "keel/core/status_macros.h"
#include "keel/drivers/jetstream/nats_client.h"
#include "keel/tests/ports/free_port.h"

namespace keel::jetstream::testing {
namespace {

using ::keel::testing::FreePort;

// Whether `url` answers a JetStream account-info request without error.
bool JetStreamAnswers(const std::string& url, const NatsAccess& access) {
  NatsClientOptions options;
  options.servers = {url};
  options.token = access.token;
  options.tls_ca_file = access.tls_ca;
  options.connect_timeout = absl::Seconds(1);
  absl::StatusOr<std::unique_ptr<NatsClient>> client = NatsClient::Connect(options);
  if (!client.ok()) return false;
  NatsReply reply = (*client)->Request("$JS.API.INFO", {}, "", absl::Seconds(2));
  return reply.kind == NatsReply::Kind::kReplied && !absl::StrContains(reply.data, "\"error\"");
}

// Whether the log written since `offset` says the server is ready: it
// logs that once it listens on every port it was given, and exits when one
// is taken.
bool LogSaysReady(const std::string& log_file, std::uintmax_t offset) {
  std::ifstream log(log_file);
  log.seekg(static_cast<std::streamoff>(offset));
  std::string line;
  while (std::getline(log, line)) {
    if (absl::StrContains(line, "Server is ready")) return true;
  }
  return false;
}

}  // namespace

std::string FindNatsServer() {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    dirs = absl::StrSplit(path, ':', absl::SkipEmpty());
  }
  dirs.insert(dirs.end(), {"/usr/sbin", "/usr/local/sbin"});
  for (const std::string& dir : dirs) {
    const std::string candidate = absl::StrCat(dir, "/nats-server");
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

absl::StatusOr<std::unique_ptr<NatsCluster>> NatsCluster::Start(int nodes, const std::string& dir,
                                                                const NatsAccess& access) {
  std::unique_ptr<NatsCluster> cluster(new NatsCluster());
  cluster->program_ = FindNatsServer();
  if (cluster->program_.empty()) {
    return absl::NotFoundError(
        "nats-server is neither on PATH nor in /usr/sbin or /usr/local/sbin");
  }
  cluster->dir_ = dir;
  cluster->access_ = access;
  std::filesystem::create_directories(dir);
  // A port can still be taken between its pick and the server's bind (by
  // a server another test starts); the node then exits, and the whole
  // cluster starts again on new ports.
  constexpr int kAttempts = 3;
  absl::Status started;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    started = cluster->LaunchOnFreshPorts(nodes);
    if (started.ok()) return cluster;
    for (int i = 0; i < cluster->size(); ++i) cluster->Kill(i);
  }
  return started;
}

absl::Status NatsCluster::LaunchOnFreshPorts(int nodes) {
  nodes_.clear();
  for (int i = 0; i < nodes; ++i) {
    Node node;
    node.name = absl::StrCat("n", i + 1);
    KEEL_ASSIGN_OR_RETURN(node.client_port, FreePort());
    KEEL_ASSIGN_OR_RETURN(node.cluster_port, FreePort());
    node.config_file = absl::StrCat(dir_, "/", node.name, ".conf");
    node.log_file = absl::StrCat(dir_, "/", node.name, ".log");
    // A failed attempt's store would remember a cluster on other ports.
    std::filesystem::remove_all(absl::StrCat(dir_, "/", node.name));
    nodes_.push_back(node);
  }
  for (const Node& node : nodes_) WriteConfig(node);
  for (Node& node : nodes_) KEEL_RETURN_IF_ERROR(Launch(node));
  return WaitReady();
}

void NatsCluster::WriteConfig(const Node& node) const {
  std::vector<std::string> routes;
  for (const Node& peer : nodes_) {
    routes.push_back(absl::StrCat("nats-route://127.0.0.1:", peer.cluster_port));
  }
  std::ofstream config(node.config_file, std::ios::trunc);
  config << "server_name: " << node.name << "\n"
         << "listen: 127.0.0.1:" << node.client_port << "\n"
         << "max_payload: 8MB\n"
         << "jetstream { store_dir: \"" << dir_ << "/" << node.name
         << "\", max_file_store: 2GB, max_memory_store: 64MB }\n";
  if (!access_.token.empty()) {
    config << "authorization { token: \"" << access_.token << "\" }\n";
  }
  if (!access_.tls_cert.empty()) {
    config << "tls { cert_file: \"" << access_.tls_cert << "\", key_file: \"" << access_.tls_key
           << "\" }\n";
  }
  if (nodes_.size() > 1) {
    // no_advertise: a client reconnects only to the servers it was given,
    // so a test can cut one off by killing its server.
    config << "cluster { name: keel, listen: 127.0.0.1:" << node.cluster_port
           << ", no_advertise: true, routes: [" << absl::StrJoin(routes, ", ") << "] }\n";
  }
}

NatsCluster::~NatsCluster() {
  for (int i = 0; i < size(); ++i) Kill(i);
}

absl::Status NatsCluster::Launch(Node& node) {
  std::error_code no_log_yet;
  const std::uintmax_t log_size = std::filesystem::file_size(node.log_file, no_log_yet);
  node.log_offset = no_log_yet ? 0 : log_size;
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork() failed");
  if (pid == 0) {
    const int log = open(node.log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log >= 0) {
      dup2(log, STDOUT_FILENO);
      dup2(log, STDERR_FILENO);
    }
    execl(program_.c_str(), program_.c_str(), "-c", node.config_file.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  node.pid = pid;
  return absl::OkStatus();
}

std::string NatsCluster::url(int node) const {
  return absl::StrCat("nats://127.0.0.1:", nodes_[node].client_port);
}

std::string NatsCluster::servers() const {
  std::vector<std::string> urls;
  for (int i = 0; i < size(); ++i) urls.push_back(url(i));
  return absl::StrJoin(urls, ",");
}

void NatsCluster::Kill(int node) {
  Node& n = nodes_[node];
  if (n.pid <= 0) return;
  kill(n.pid, SIGKILL);
  waitpid(n.pid, nullptr, 0);
  n.pid = -1;
}

absl::Status NatsCluster::Restart(int node) {
  if (nodes_[node].pid > 0) return absl::OkStatus();
  return Launch(nodes_[node]);
}

absl::Status NatsCluster::WaitReady(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  for (int i = 0; i < size(); ++i) {
    if (!running(i)) continue;
    // Only the node's own log shows that it holds its ports: a server of
    // another test on a port this node failed to bind answers as well.
    while (!LogSaysReady(nodes_[i].log_file, nodes_[i].log_offset) ||
           !JetStreamAnswers(url(i), access_)) {
      int status = 0;
      if (waitpid(nodes_[i].pid, &status, WNOHANG) == nodes_[i].pid) {
        nodes_[i].pid = -1;
        return absl::UnavailableError(
            absl::StrCat("nats-server ", nodes_[i].name, " exited; see ", nodes_[i].log_file));
      }
      if (absl::Now() > deadline) {
        return absl::UnavailableError(absl::StrCat("nats-server ", nodes_[i].name,
                                                   " does not answer JetStream requests; see ",
                                                   nodes_[i].log_file));
      }
      absl::SleepFor(absl::Milliseconds(100));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int> NatsCluster::LeaderOf(const std::string& stream, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    for (int i = 0; i < size(); ++i) {
      if (!running(i)) continue;
      NatsClientOptions options;
      options.servers = {url(i)};
      options.token = access_.token;
      options.tls_ca_file = access_.tls_ca;
      options.connect_timeout = absl::Seconds(1);
      absl::StatusOr<std::unique_ptr<NatsClient>> client = NatsClient::Connect(options);
      if (!client.ok()) continue;
      NatsReply reply = (*client)->Request(absl::StrCat("$JS.API.STREAM.INFO.", stream), {}, "",
                                           absl::Seconds(2));
      if (reply.kind != NatsReply::Kind::kReplied) continue;
      for (int j = 0; j < size(); ++j) {
        if (absl::StrContains(reply.data, absl::StrCat("\"leader\":\"", nodes_[j].name, "\""))) {
          return j;
        }
      }
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  return absl::UnavailableError(absl::StrCat("stream ", stream, " has no leader"));
}

}  // namespace keel::jetstream::testing
