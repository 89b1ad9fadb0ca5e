#include "keel/cmd/keel-bench/push_receiver.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace keel::bench {
namespace {

constexpr absl::string_view kAnswer = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";

int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The value of header `name` (lower case) in `headers`; "" when absent.
absl::string_view HeaderValue(absl::string_view headers, absl::string_view name) {
  for (absl::string_view line : absl::StrSplit(headers, "\r\n")) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    if (absl::EqualsIgnoreCase(line.substr(0, colon), name)) {
      return absl::StripAsciiWhitespace(line.substr(colon + 1));
    }
  }
  return "";
}

bool SendAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PushReceiver>> PushReceiver::Start() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", strerror(errno)));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(fd, 64) != 0 || getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    close(fd);
    return absl::InternalError(absl::StrCat("receiver socket: ", strerror(errno)));
  }
  std::unique_ptr<PushReceiver> receiver(new PushReceiver(fd, ntohs(address.sin_port)));
  receiver->acceptor_ = std::thread([r = receiver.get()] { r->Accept(); });
  return receiver;
}

PushReceiver::~PushReceiver() {
  stopping_ = true;
  shutdown(listen_fd_, SHUT_RDWR);
  close(listen_fd_);
  acceptor_.join();
  std::vector<std::thread> connections;
  {
    MutexLock lock(&mu_);
    for (int fd : fds_) shutdown(fd, SHUT_RDWR);
    connections.swap(connections_);
  }
  for (std::thread& connection : connections) connection.join();
}

Histogram PushReceiver::TakeLatencies() {
  MutexLock lock(&mu_);
  Histogram out = latencies_;
  latencies_ = Histogram();
  return out;
}

void PushReceiver::Accept() {
  while (!stopping_) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (stopping_) return;
      continue;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    MutexLock lock(&mu_);
    fds_.push_back(fd);
    connections_.emplace_back([this, fd] { Serve(fd); });
  }
}

void PushReceiver::Serve(int fd) {
  std::string buffer;
  char chunk[64 * 1024];
  for (;;) {
    const size_t end = buffer.find("\r\n\r\n");
    if (end != std::string::npos) {
      const std::string headers = buffer.substr(0, end);
      size_t body_length = 0;
      if (!absl::SimpleAtoi(HeaderValue(headers, "content-length"), &body_length)) body_length = 0;
      if (buffer.size() >= end + 4 + body_length) {
        Count(headers, buffer.substr(end + 4, body_length));
        buffer.erase(0, end + 4 + body_length);
        if (!SendAll(fd, kAnswer)) break;
        continue;
      }
    }
    const ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
    if (n <= 0) break;
    buffer.append(chunk, static_cast<size_t>(n));
  }
  close(fd);
}

void PushReceiver::Count(const std::string& headers, const std::string& body) {
  const absl::string_view ids = HeaderValue(headers, "keel-event-ids");
  const uint64_t events = ids.empty() ? 0 : std::count(ids.begin(), ids.end(), ',') + 1;
  requests_.fetch_add(1, std::memory_order_relaxed);
  // "ts" is the publisher's steady clock; both run on this machine.
  const int64_t now = SteadyNanos();
  Histogram latencies;
  for (size_t at = body.find("\"ts\":"); at != std::string::npos;
       at = body.find("\"ts\":", at + 5)) {
    int64_t ts = 0;
    const size_t digits = body.find_first_not_of("0123456789", at + 5);
    if (absl::SimpleAtoi(absl::string_view(body).substr(at + 5, digits - at - 5), &ts) &&
        now > ts) {
      latencies.Add(static_cast<uint64_t>((now - ts) / 1000));
    }
  }
  if (latencies.count() > 0) {
    MutexLock lock(&mu_);
    latencies_.Merge(latencies);
  }
  events_.fetch_add(events, std::memory_order_release);
}

}  // namespace keel::bench
