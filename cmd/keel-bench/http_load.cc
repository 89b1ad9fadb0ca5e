#include "keel/cmd/keel-bench/http_load.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "keel/cmd/keel-bench/bench_process.h"
#include "keel/core/mutex.h"

namespace keel::bench {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;

// Parses a response head at the start of `data`. Returns the number of bytes
// of the whole response (head + body) once it is complete, 0 while more
// bytes are needed, -1 when it is malformed. Sets `status`.
long ParseResponse(const char* data, size_t size, int& status) {
  const char* end = static_cast<const char*>(memmem(data, size, "\r\n\r\n", 4));
  if (end == nullptr) return size > 64 * 1024 ? -1 : 0;
  const size_t head = static_cast<size_t>(end - data) + 4;
  if (size < 12 || std::memcmp(data, "HTTP/1.", 7) != 0) return -1;
  status = (data[9] - '0') * 100 + (data[10] - '0') * 10 + (data[11] - '0');
  // Content-Length (Beast writes it in this case; accept any case).
  size_t body = 0;
  absl::string_view headers(data, head);
  size_t at = 0;
  while ((at = headers.find("\r\n", at)) != absl::string_view::npos) {
    at += 2;
    if (headers.size() - at > 15 &&
        absl::EqualsIgnoreCase(headers.substr(at, 15), "content-length:")) {
      size_t value_end = headers.find("\r\n", at);
      absl::string_view value = absl::StripAsciiWhitespace(
          headers.substr(at + 15, value_end - at - 15));
      if (!absl::SimpleAtoi(value, &body)) return -1;
      break;
    }
  }
  if (size < head + body) return 0;
  return static_cast<long>(head + body);
}

class Load {
 public:
  explicit Load(const LoadOptions& options) : options(options) {}

  const LoadOptions& options;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> tickets{0};  // Requests claimed (counted runs).
  std::atomic<uint64_t> responses{0};
  std::atomic<uint64_t> good{0};
  std::atomic<uint64_t> bad{0};
  std::atomic<uint64_t> io_errors{0};
  keel::Mutex mu;
  std::map<int, uint64_t> statuses ABSL_GUARDED_BY(mu);
  std::string first_bad ABSL_GUARDED_BY(mu);
  std::string first_error ABSL_GUARDED_BY(mu);

  // Whether a connection may send another request.
  bool Claim() {
    if (stop.load(std::memory_order_relaxed)) return false;
    if (options.total_requests == 0) return true;
    return tickets.fetch_add(1, std::memory_order_relaxed) < options.total_requests;
  }

  void Count(int status, const char* data, size_t size) {
    responses.fetch_add(1, std::memory_order_relaxed);
    if (status == options.expected_status) {
      good.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    bad.fetch_add(1, std::memory_order_relaxed);
    keel::MutexLock lock(&mu);
    ++statuses[status];
    if (first_bad.empty()) first_bad.assign(data, std::min<size_t>(size, 2000));
  }
};

// One client thread: its connections on one epoll set, level-triggered, like
// redis-benchmark's event loop, so that a response costs one recv and the
// next request one send (Asio's reactor adds a third system call per
// response: a read that finds nothing yet, or a re-arm of the descriptor).
class LoadThread {
 public:
  explicit LoadThread(Load& load) : load_(load), epoll_fd_(epoll_create1(EPOLL_CLOEXEC)) {}
  ~LoadThread() {
    for (auto& connection : connections_) Close(*connection);
    if (epoll_fd_ >= 0) close(epoll_fd_);
  }

  // Opens one more keep-alive connection (blocking connect, then
  // non-blocking I/O).
  absl::Status Connect(const sockaddr_in& address) {
    auto connection = std::make_unique<Connection>();
    connection->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (connection->fd < 0) return Errno("socket");
    const int fd = connection->fd;
    connections_.push_back(std::move(connection));
    ++open_;  // Closed, and so counted out, by the destructor should the rest fail.
    if (connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
      return Errno("connect");
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.ptr = connections_.back().get();
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) return Errno("epoll_ctl");
    return absl::OkStatus();
  }

  // Sends the first requests and serves responses until every connection
  // has closed (the run stopped, or its requests were all sent).
  // Connections still waiting for a response 10 s after the run stopped
  // (a server that stopped answering) fail instead of holding it forever.
  void Run() {
    for (auto& connection : connections_) Send(*connection);
    epoll_event events[128];
    int quiet_after_stop = 0;  // Empty 100 ms waits since the run stopped.
    while (open_ > 0) {
      const int n = epoll_wait(epoll_fd_, events, 128, 100);
      for (int i = 0; i < n; ++i) OnReadable(*static_cast<Connection*>(events[i].data.ptr));
      quiet_after_stop = n == 0 && load_.stop.load() ? quiet_after_stop + 1 : 0;
      if (quiet_after_stop == 100) {
        for (auto& connection : connections_) {
          if (connection->fd >= 0) Fail(*connection, "no response 10 s after the run stopped");
        }
      }
    }
  }

 private:
  struct Connection {
    int fd = -1;
    std::vector<char> buffer = std::vector<char>(64 * 1024);
    size_t filled = 0;
  };

  static absl::Status Errno(absl::string_view what) {
    return absl::UnavailableError(absl::StrCat("load: ", what, ": ", std::strerror(errno)));
  }

  void Send(Connection& connection) {
    if (connection.fd < 0) return;
    if (!load_.Claim()) return Close(connection);
    const std::string& request = load_.options.request;
    size_t sent = 0;
    while (sent < request.size()) {
      const ssize_t n =
          send(connection.fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && errno == EAGAIN) {
        pollfd writable{connection.fd, POLLOUT, 0};
        poll(&writable, 1, 1000);
      } else {
        return Fail(connection, "send");
      }
    }
  }

  void OnReadable(Connection& connection) {
    std::vector<char>& buffer = connection.buffer;
    if (connection.filled == buffer.size()) buffer.resize(buffer.size() * 2);
    ssize_t n = 0;
    do {
      n = recv(connection.fd, buffer.data() + connection.filled, buffer.size() - connection.filled,
               0);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) return Fail(connection, n == 0 ? "connection closed by the server" : "recv");
    connection.filled += static_cast<size_t>(n);
    int status = 0;
    const long used = ParseResponse(buffer.data(), connection.filled, status);
    if (used < 0) return Fail(connection, "malformed response");
    if (used == 0) return;  // More to come.
    load_.Count(status, buffer.data(), static_cast<size_t>(used));
    std::memmove(buffer.data(), buffer.data() + used, connection.filled - static_cast<size_t>(used));
    connection.filled -= static_cast<size_t>(used);
    Send(connection);
  }

  void Fail(Connection& connection, absl::string_view what) {
    load_.io_errors.fetch_add(1, std::memory_order_relaxed);
    {
      keel::MutexLock lock(&load_.mu);
      if (load_.first_error.empty()) load_.first_error = std::string(what);
    }
    Close(connection);
  }

  void Close(Connection& connection) {
    if (connection.fd < 0) return;
    close(connection.fd);
    connection.fd = -1;
    --open_;
  }

  Load& load_;
  const int epoll_fd_;
  std::vector<std::unique_ptr<Connection>> connections_;
  int open_ = 0;  // Connections not yet closed.
};

}  // namespace

std::string JsonPostRequest(absl::string_view host, absl::string_view target,
                            absl::string_view body) {
  return absl::StrCat("POST ", target, " HTTP/1.1\r\nHost: ", host,
                      "\r\nContent-Type: application/json\r\nContent-Length: ", body.size(),
                      "\r\n\r\n", body);
}

absl::StatusOr<LoadResult> RunHttpLoad(const LoadOptions& options) {
  if (options.connections < 1 || options.threads < 1 || options.request.empty()) {
    return absl::InvalidArgumentError("load: connections, threads and request are required");
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(options.port);
  if (inet_pton(AF_INET, options.host.c_str(), &address.sin_addr) != 1) {
    return absl::InvalidArgumentError(absl::StrCat("load: bad IPv4 host ", options.host));
  }
  Load load(options);
  std::vector<std::unique_ptr<LoadThread>> loaders;
  for (int i = 0; i < options.threads; ++i) loaders.push_back(std::make_unique<LoadThread>(load));
  for (int i = 0; i < options.connections; ++i) {
    if (absl::Status connected = loaders[i % options.threads]->Connect(address); !connected.ok()) {
      return connected;
    }
  }
  using Clock = std::chrono::steady_clock;
  const Clock::time_point begin = Clock::now();
  std::vector<std::thread> threads;
  for (auto& loader : loaders) threads.emplace_back([&loader] { loader->Run(); });

  LoadResult result;
  if (options.total_requests == 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(options.warmup_seconds));
    auto client_cpu = [&threads] {
      double seconds = 0;
      for (std::thread& thread : threads) seconds += ThreadCpuSeconds(thread.native_handle());
      return seconds;
    };
    const uint64_t responses0 = load.responses.load();
    const uint64_t good0 = load.good.load();
    const double process_cpu0 = ProcessCpuSeconds(0);
    const double client_cpu0 = client_cpu();
    const Clock::time_point t0 = Clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(options.seconds));
    const uint64_t responses1 = load.responses.load();
    const uint64_t good1 = load.good.load();
    const double process_cpu1 = ProcessCpuSeconds(0);
    const double client_cpu1 = client_cpu();
    const Clock::time_point t1 = Clock::now();
    load.stop.store(true);
    result.responses = responses1 - responses0;
    result.good = good1 - good0;
    result.seconds = std::chrono::duration<double>(t1 - t0).count();
    result.process_cpu_seconds = process_cpu1 - process_cpu0;
    result.client_cpu_seconds = client_cpu1 - client_cpu0;
  }
  for (std::thread& thread : threads) thread.join();
  if (options.total_requests != 0) {
    result.seconds = std::chrono::duration<double>(Clock::now() - begin).count();
    result.responses = load.responses.load();
    result.good = load.good.load();
  }
  result.bad = load.bad.load();
  result.io_errors = load.io_errors.load();
  keel::MutexLock lock(&load.mu);
  result.first_bad_response = load.first_bad;
  result.statuses = load.statuses;
  if (load.good.load() > 0) result.statuses[options.expected_status] = load.good.load();
  if (result.io_errors > 0 && result.first_bad_response.empty()) {
    result.first_bad_response = absl::StrCat("I/O error: ", load.first_error);
  }
  return result;
}

struct BlockingHttpClient::Impl {
  net::io_context ioc;
  tcp::socket socket{ioc};
  std::string buffer;
};

BlockingHttpClient::BlockingHttpClient() : impl_(std::make_unique<Impl>()) {}
BlockingHttpClient::~BlockingHttpClient() = default;

absl::Status BlockingHttpClient::Connect(const std::string& host, uint16_t port) {
  boost::system::error_code ec;
  const tcp::endpoint endpoint(net::ip::make_address(host, ec), port);
  if (!ec) impl_->socket.connect(endpoint, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("connect ", host, ":", port, ": ", ec.message()));
  impl_->socket.set_option(tcp::no_delay(true), ec);
  return absl::OkStatus();
}

absl::StatusOr<BlockingHttpClient::Response> BlockingHttpClient::RoundTrip(
    const std::string& request) {
  boost::system::error_code ec;
  net::write(impl_->socket, net::buffer(request), ec);
  if (ec) return absl::UnavailableError(absl::StrCat("write: ", ec.message()));
  std::string& buffer = impl_->buffer;
  char chunk[16 * 1024];
  while (true) {
    int status = 0;
    const long used = ParseResponse(buffer.data(), buffer.size(), status);
    if (used < 0) return absl::InternalError("malformed HTTP response");
    if (used > 0) {
      Response response;
      response.status = status;
      const size_t head = buffer.find("\r\n\r\n") + 4;
      response.body = buffer.substr(head, static_cast<size_t>(used) - head);
      buffer.erase(0, static_cast<size_t>(used));
      return response;
    }
    const size_t n = impl_->socket.read_some(net::buffer(chunk), ec);
    if (ec) return absl::UnavailableError(absl::StrCat("read: ", ec.message()));
    buffer.append(chunk, n);
  }
}

}  // namespace keel::bench
