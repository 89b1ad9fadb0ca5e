// RawConnection: a plain blocking loopback socket for tests that need to
// see what a connection does byte by byte (when it is closed, what arrives
// while the client does not read), below any HTTP client.
#ifndef KEEL_TESTS_CMD_DAEMON_RAW_CONNECTION_H_
#define KEEL_TESTS_CMD_DAEMON_RAW_CONNECTION_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace keel::daemon_test {

// A blocking loopback connection whose reads and sends give up after 10 s,
// so that a connection the daemon wrongly keeps open (or stops reading)
// fails the test instead of hanging.
class RawConnection {
 public:
  // `receive_buffer` (bytes, 0 = the system's): a small one keeps the
  // daemon's writes waiting while this side does not read. `send_buffer`
  // likewise keeps this side's sends waiting for the daemon to read.
  explicit RawConnection(uint16_t port, int receive_buffer = 0, int send_buffer = 0)
      : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    timeval timeout{10, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    if (receive_buffer > 0) {
      setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof(receive_buffer));
    }
    if (send_buffer > 0) {
      setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &send_buffer, sizeof(send_buffer));
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~RawConnection() { close(fd_); }

  bool connected() const { return connected_; }
  // Sends all of `bytes` (blocking); a failed send fails the test, saying
  // how much went out first.
  void Send(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      ASSERT_GE(n, 0) << "send failed after " << sent << " of " << bytes.size()
                      << " bytes: " << strerror(errno);
      sent += static_cast<size_t>(n);
    }
  }

  // What one read returns: the bytes, "" at end of stream, or the error.
  std::string Read() {
    char buffer[4096];
    const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
    if (n < 0) return errno == EAGAIN ? "<timeout>" : "<error>";
    return std::string(buffer, static_cast<size_t>(n));
  }

  // Reads until `count` responses have begun arriving, each without its
  // "HTTP/1.1 "; fails the test (returning the ones read) if the connection
  // ends or stays silent first.
  std::vector<std::string> ReadResponses(size_t count) {
    std::string received;
    std::vector<std::string> responses;
    while (responses.size() < count) {
      const std::string chunk = Read();
      if (chunk.empty() || chunk == "<timeout>" || chunk == "<error>") {
        ADD_FAILURE() << "got " << responses.size() << " of " << count << " answers, then "
                      << (chunk.empty() ? "end of stream" : chunk);
        break;
      }
      received += chunk;
      responses = absl::StrSplit(received, "HTTP/1.1 ", absl::SkipEmpty());
    }
    return responses;
  }

 private:
  const int fd_;
  bool connected_ = false;
};

// A health check as a client sends it.
inline constexpr char kRawHealthz[] = "GET /healthz HTTP/1.1\r\nHost: keel\r\n\r\n";

// A publish of `body` (JSON) to `stream` as a client sends it.
inline std::string RawPublishRequest(const std::string& stream, const std::string& body) {
  return absl::StrCat("POST /v1/streams/", stream, "/events HTTP/1.1\r\nHost: keel\r\n",
                      "Content-Type: application/json\r\nContent-Length: ", body.size(),
                      "\r\n\r\n", body);
}

}  // namespace keel::daemon_test

#endif  // KEEL_TESTS_CMD_DAEMON_RAW_CONNECTION_H_
