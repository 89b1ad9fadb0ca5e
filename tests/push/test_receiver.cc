#include "keel/tests/push/test_receiver.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace keel::push_test {
namespace {

// One accepted connection, plain or TLS.
class Connection {
 public:
  Connection(int fd, SSL_CTX* tls) : fd_(fd) {
    if (tls == nullptr) return;
    ssl_ = SSL_new(tls);
    SSL_set_fd(ssl_, fd);
    if (SSL_accept(ssl_) != 1) failed_ = true;
  }
  ~Connection() {
    if (ssl_ != nullptr) SSL_free(ssl_);
  }
  bool failed() const { return failed_; }
  ssize_t Read(char* data, size_t size) {
    if (ssl_ == nullptr) return recv(fd_, data, size, 0);
    return SSL_read(ssl_, data, static_cast<int>(size));
  }
  bool Write(const std::string& data) {
    if (ssl_ == nullptr) return send(fd_, data.data(), data.size(), MSG_NOSIGNAL) >= 0;
    return SSL_write(ssl_, data.data(), static_cast<int>(data.size())) > 0;
  }

 private:
  int fd_;
  SSL* ssl_ = nullptr;
  bool failed_ = false;
};

// Reads one request from `connection` into `request`, `buffer` holding
// bytes read past the previous one; false at the connection's end.
bool ReadRequest(Connection& connection, std::string& buffer, ReceivedRequest& request) {
  char chunk[8192];
  size_t head_end;
  while ((head_end = buffer.find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = connection.Read(chunk, sizeof chunk);
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
    ssize_t n = connection.Read(chunk, sizeof chunk);
    if (n <= 0) return false;
    buffer.append(chunk, n);
  }
  request.body = buffer.substr(0, length);
  buffer.erase(0, length);
  return true;
}

SSL_CTX* ServerContext(const ReceiverTls& tls) {
  // OpenSSL writes with write(2): a peer that hung up would raise SIGPIPE.
  signal(SIGPIPE, SIG_IGN);
  SSL_CTX* context = SSL_CTX_new(TLS_server_method());
  if (context == nullptr ||
      SSL_CTX_use_certificate_chain_file(context, tls.cert_file.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(context, tls.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    std::abort();
  }
  return context;
}

}  // namespace

TestReceiver::TestReceiver(Handler handler) : TestReceiver(std::move(handler), nullptr) {}

TestReceiver::TestReceiver(Handler handler, const ReceiverTls& tls)
    : TestReceiver(std::move(handler), ServerContext(tls)) {}

TestReceiver::TestReceiver(Handler handler, ssl_ctx_st* tls)
    : handler_(std::move(handler)), tls_(tls) {
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
  if (tls_ != nullptr) SSL_CTX_free(tls_);
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
  Connection connection(fd, tls_);
  while (!connection.failed()) {
    ReceivedRequest request;
    if (stopping_ || !ReadRequest(connection, buffer, request)) break;
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
    if (!connection.Write(response)) break;
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
