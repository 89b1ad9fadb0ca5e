// A request refused before its body was read (413) still reaches a client
// that sends the whole body before it reads anything, as Python's
// http.client and requests do: the daemon answers, then reads and discards
// the rest of the body before it closes, so the client's send completes and
// the answer is there to read, instead of a reset that fails the send and
// destroys the answer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/cmd/daemon/raw_connection.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr size_t kBodyLimit = 64 << 10;
// Well past the limit and past what the two sockets' buffers hold together
// (the client's is made small): the client's sends wait until the daemon
// reads.
constexpr size_t kBodyBytes = 2 << 20;
constexpr int kSmallSocketBuffer = 16 << 10;

// Everything the daemon sends until it closes the connection.
std::string ReadToEnd(RawConnection& connection) {
  std::string received;
  while (true) {
    const std::string chunk = connection.Read();
    if (chunk.empty()) return received;
    if (chunk == "<timeout>" || chunk == "<error>") return received + chunk;
    received += chunk;
  }
}

class RefusedBodyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DaemonOptions options;
    options.server.body_limit = kBodyLimit;
    daemon_ = std::make_unique<InProcessDaemon>(options);
    ASSERT_OK(daemon_->Start());
  }

  std::unique_ptr<InProcessDaemon> daemon_;
};

// Sends a request with a body over the limit whole, with blocking sends,
// and only then reads: the answer must be the 413 JSON.
void SendWholeThenRead(uint16_t port) {
  const std::string head = absl::StrCat(
      "POST /v1/streams/big/events HTTP/1.1\r\nHost: keel\r\nContent-Type: application/json\r\n",
      "Content-Length: ", kBodyBytes, "\r\n\r\n");
  RawConnection connection(port, kSmallSocketBuffer, kSmallSocketBuffer);
  ASSERT_TRUE(connection.connected());
  ASSERT_NO_FATAL_FAILURE(connection.Send(head));
  ASSERT_NO_FATAL_FAILURE(connection.Send(std::string(kBodyBytes, 'x')));

  const std::string response = ReadToEnd(connection);
  ASSERT_THAT(response, StartsWith("HTTP/1.1 413 ")) << response.substr(0, 200);
  const size_t body_at = response.find("\r\n\r\n");
  ASSERT_NE(body_at, std::string::npos);
  const boost::json::value answer = boost::json::parse(response.substr(body_at + 4));
  EXPECT_EQ(answer.at("error").at("code").as_string(), "payload_too_large");
  EXPECT_THAT(std::string(answer.at("error").at("message").as_string()),
              HasSubstr(absl::StrCat(kBodyLimit)));
}

TEST_F(RefusedBodyTest, AClientThatSendsItsWholeBodyFirstReadsThe413) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    SCOPED_TRACE(absl::StrCat("attempt ", attempt));
    SendWholeThenRead(daemon_->port());
  }
  // Nothing of the refused bodies was stored, and the daemon serves on.
  auto http = daemon_->NewClient();
  ASSERT_OK_AND_ASSIGN(PublishedEvent event, Publish(*http, "big", "t", "1"));
  EXPECT_EQ(event.sequence, 1u);
}

TEST_F(RefusedBodyTest, AChunkedBodyOverTheLimitIsAnsweredTheSameWay) {
  const std::string chunk(8 << 10, 'x');
  std::string request =
      "POST /v1/streams/big/events HTTP/1.1\r\nHost: keel\r\nContent-Type: application/json\r\n"
      "Transfer-Encoding: chunked\r\n\r\n";
  for (size_t sent = 0; sent < kBodyBytes; sent += chunk.size()) {
    absl::StrAppend(&request, absl::Hex(chunk.size()), "\r\n", chunk, "\r\n");
  }
  request += "0\r\n\r\n";
  RawConnection connection(daemon_->port(), kSmallSocketBuffer, kSmallSocketBuffer);
  ASSERT_TRUE(connection.connected());
  ASSERT_NO_FATAL_FAILURE(connection.Send(request));

  const std::string response = ReadToEnd(connection);
  EXPECT_THAT(response, StartsWith("HTTP/1.1 413 ")) << response.substr(0, 200);
  EXPECT_THAT(response, HasSubstr("payload_too_large"));
}

}  // namespace
}  // namespace keel::daemon_test
