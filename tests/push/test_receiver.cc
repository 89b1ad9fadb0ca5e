#include "keel/tests/push/test_receiver.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace keel::push_test {
namespace {

// Reads one request from `fd` into `request`, `buffer` holding bytes read
// past the previous one; false at the connection's end.
bool ReadRequest(int fd, std::string& buffer, ReceivedRequest& request) {
  char chunk[8192];
  size_t head_end;
  while ((head_end = buffer.find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer.append(chunk, n);
  }
  std::vector<std::string> lines = absl::StrSplit(buffer.substr(0, head_end), "\r\n");
  std::vector<std::string> first = absl::StrSplit(lines[0], ' ');
  request.target = first.size() > 1 ? first[1] : "";
  size_t length = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    size_t colon = lines[i].find(':');
    if (colon == std::string::npos) continue;
    std::string name = absl::AsciiStrToLower(lines[i].substr(0, colon));
    std::string value(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
    if (name == "content-length" && !absl::SimpleAtoi(value, &length)) return false;
    request.headers[name] = value;
  }
  buffer.erase(0, head_end + 4);
  while (buffer.size() < length) {
    ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer.append(chunk, n);
  }
  request.body = buffer.substr(0, length);
  buffer.erase(0, length);
  return true;
}

}  // namespace

TestReceiver::TestReceiver(Handler handler) : handler_(std::move(handler)) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      listen(listen_fd_, 64) != 0) {
    std::abort();
  }
  socklen_t size = sizeof address;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &size);
  port_ = ntohs(address.sin_port);
  acceptor_ = std::thread([this] { Accept(); });
}

TestReceiver::~TestReceiver() {
  stopping_ = true;
  acceptor_.join();
  close(listen_fd_);
  std::vector<std::thread> connections;
  {
    MutexLock lock(&mu_);
    for (int fd : open_fds_) shutdown(fd, SHUT_RDWR);
    connections.swap(connections_);
  }
  for (std::thread& connection : connections) connection.join();
}

void TestReceiver::Accept() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    int fd = accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    MutexLock lock(&mu_);
    open_fds_.push_back(fd);
    connections_.emplace_back([this, fd] { Serve(fd); });
  }
}

void TestReceiver::Serve(int fd) {
  std::string buffer;
  for (;;) {
    ReceivedRequest request;
    if (stopping_ || !ReadRequest(fd, buffer, request)) break;
    request.arrived = absl::Now();
    int index;
    {
      MutexLock lock(&mu_);
      index = static_cast<int>(requests_.size());
      requests_.push_back(request);
    }
    Reply reply = handler_(request, index);
    {
      MutexLock lock(&mu_);
      requests_[index].answered = reply.status;
    }
    const absl::Time until = absl::Now() + reply.delay;
    while (!stopping_ && absl::Now() < until) absl::SleepFor(absl::Milliseconds(10));
    std::string response = absl::StrCat("HTTP/1.1 ", reply.status, " X\r\nContent-Length: 0\r\n");
    for (const auto& [name, value] : reply.headers)
      absl::StrAppend(&response, name, ": ", value, "\r\n");
    response += "\r\n";
    if (send(fd, response.data(), response.size(), MSG_NOSIGNAL) < 0) break;
  }
  MutexLock lock(&mu_);
  std::erase(open_fds_, fd);
  close(fd);
}

std::vector<ReceivedRequest> TestReceiver::requests() const {
  MutexLock lock(&mu_);
  return requests_;
}

bool TestReceiver::WaitFor(const std::function<bool(const std::vector<ReceivedRequest>&)>& done,
                           absl::Duration timeout) const {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (done(requests())) return true;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return done(requests());
}

}  // namespace keel::push_test
