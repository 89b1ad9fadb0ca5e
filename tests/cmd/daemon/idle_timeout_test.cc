// Request/response connections seen from a plain socket: the idle timeout
// closes a connection that stops mid-request and spares one in use,
// pipelined requests are each answered, and a response too large for the
// socket's buffer is written in parts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/cmd/daemon/raw_connection.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

using ::testing::StartsWith;

// A daemon with the given idle timeout and one plain connection to it.
class IdleTimeoutTest : public ::testing::Test {
 protected:
  void Open(absl::Duration idle_timeout, int receive_buffer = 0) {
    DaemonOptions options;
    options.server.idle_timeout = idle_timeout;
    daemon_ = std::make_unique<InProcessDaemon>(options);
    ASSERT_OK(daemon_->Start());
    connection_ = std::make_unique<RawConnection>(daemon_->port(), receive_buffer);
    ASSERT_TRUE(connection_->connected());
  }

  std::unique_ptr<InProcessDaemon> daemon_;
  std::unique_ptr<RawConnection> connection_;  // Closed before the daemon stops.
};

TEST_F(IdleTimeoutTest, AConnectionThatStopsMidRequestIsClosed) {
  ASSERT_NO_FATAL_FAILURE(Open(absl::Milliseconds(200)));

  const absl::Time sent = absl::Now();
  connection_->Send("POST /v1/streams/s/events HTTP/1.1\r\nHost: keel\r\n");

  EXPECT_EQ(connection_->Read(), "") << "the daemon closes the connection, answering nothing";
  // Not at once: the timeout runs from when the daemon started reading.
  EXPECT_GE(absl::Now() - sent, absl::Milliseconds(150));
}

TEST_F(IdleTimeoutTest, AnInfiniteTimeoutKeepsAConnectionOpen) {
  ASSERT_NO_FATAL_FAILURE(Open(absl::InfiniteDuration()));

  absl::SleepFor(absl::Milliseconds(100));
  connection_->Send(kRawHealthz);
  EXPECT_THAT(connection_->Read(), StartsWith("HTTP/1.1 200"));
  connection_->Send(kRawHealthz);
  EXPECT_THAT(connection_->Read(), StartsWith("HTTP/1.1 200"));
}

TEST_F(IdleTimeoutTest, AConnectionInUseOutlivesTheTimeout) {
  ASSERT_NO_FATAL_FAILURE(Open(absl::Milliseconds(500)));

  // Six requests 150 ms apart: 900 ms on one connection, each pause well
  // inside the timeout.
  for (int i = 0; i < 6; ++i) {
    connection_->Send(kRawHealthz);
    EXPECT_THAT(connection_->Read(), StartsWith("HTTP/1.1 200")) << "request " << i;
    absl::SleepFor(absl::Milliseconds(150));
  }
  // Then idle: closed.
  EXPECT_EQ(connection_->Read(), "");
}

// Requests sent back to back before any answer (HTTP pipelining) are each
// answered, in order: a request the daemon has already read must not wait
// for the socket to become readable again.
TEST_F(IdleTimeoutTest, PipelinedRequestsAreEachAnsweredInOrder) {
  ASSERT_NO_FATAL_FAILURE(Open(absl::Seconds(30)));
  const std::string publish = RawPublishRequest("p", R"({"type":"t","data":1})");
  connection_->Send(publish + publish + kRawHealthz);

  const std::vector<std::string> responses = connection_->ReadResponses(3);
  ASSERT_EQ(responses.size(), 3u);
  EXPECT_THAT(responses[0], StartsWith("201"));
  EXPECT_TRUE(absl::StrContains(responses[0], R"("sequence":1,)")) << responses[0];
  EXPECT_THAT(responses[1], StartsWith("201"));
  EXPECT_TRUE(absl::StrContains(responses[1], R"("sequence":2,)")) << responses[1];
  EXPECT_THAT(responses[2], StartsWith("200"));
}

// A request that arrives in pieces (a part of its head, the rest of the head
// with part of the body, the rest of the body) is read whole and answered
// once, as is the next one, sent whole.
TEST_F(IdleTimeoutTest, ARequestSplitAcrossReadsIsReadWhole) {
  ASSERT_NO_FATAL_FAILURE(Open(absl::Seconds(30)));
  const std::string publish = RawPublishRequest("split", R"({"type":"t","data":"abcdef"})");
  const size_t head_end = publish.find("\r\n\r\n") + 4;
  for (const std::string& piece : {publish.substr(0, 20), publish.substr(20, head_end + 5 - 20),
                                   publish.substr(head_end + 5)}) {
    connection_->Send(piece);
    absl::SleepFor(absl::Milliseconds(50));  // Each piece read on its own.
  }
  connection_->Send(publish);
  const std::vector<std::string> responses = connection_->ReadResponses(2);
  ASSERT_EQ(responses.size(), 2u);
  EXPECT_TRUE(absl::StrContains(responses[0], R"("sequence":1,)")) << responses[0];
  EXPECT_TRUE(absl::StrContains(responses[1], R"("sequence":2,)")) << responses[1];
  ASSERT_OK_AND_ASSIGN(
      const json::value page,
      GetJson(*daemon_->NewClient(), "/v1/streams/split/events?after=earliest"));
  EXPECT_EQ(page.at("events").at(0).at("data"), "abcdef") << "the body, whole";
}

// Publishes 40 events of about 100 KB each (data "<i>xxx…") to `stream`: a
// page of them is more than a socket takes at once.
void PublishLargeEvents(client::HttpClient& http, const std::string& stream) {
  for (int i = 0; i < 40; ++i) {
    const std::string data = absl::StrCat("\"", i, std::string(100'000, 'x'), "\"");
    ASSERT_OK(Publish(http, stream, "t", data).status());
  }
}

// A client that stops reading its answer: the daemon's write waits past the
// timeout and the connection is cut with the answer unfinished.
TEST_F(IdleTimeoutTest, AWriteToAClientThatStopsReadingIsCut) {
  ASSERT_NO_FATAL_FAILURE(Open(absl::Milliseconds(200)));
  ASSERT_NO_FATAL_FAILURE(PublishLargeEvents(*daemon_->NewClient(), "big"));
  // Connected now: publishing took longer than the timeout.
  RawConnection reader(daemon_->port(), /*receive_buffer=*/4096);
  ASSERT_TRUE(reader.connected());
  reader.Send(
      "GET /v1/streams/big/events?after=earliest&limit=40 HTTP/1.1\r\nHost: keel\r\n\r\n");
  absl::SleepFor(absl::Seconds(1));  // Five timeouts without reading.

  size_t received = 0;
  std::string last;
  while (true) {
    last = reader.Read();
    if (last.empty() || last == "<error>" || last == "<timeout>") break;
    received += last.size();
  }
  EXPECT_NE(last, "<timeout>") << "the connection was left open";
  EXPECT_GT(received, 0u) << "the answer was started";
  EXPECT_LT(received, 4'000'000u) << "the whole answer arrived";
}

// A response the socket cannot take at once (a 4 MB page) is written in
// parts, and arrives whole and in order.
TEST(LargeResponseTest, ALargerResponseThanTheSocketTakesArrivesWhole) {
  InProcessDaemon daemon;
  ASSERT_OK(daemon.Start());
  auto http = daemon.NewClient();
  ASSERT_NO_FATAL_FAILURE(PublishLargeEvents(*http, "big"));
  ASSERT_OK_AND_ASSIGN(json::value page,
                       GetJson(*http, "/v1/streams/big/events?after=earliest&limit=40"));
  const json::array& events = page.at("events").as_array();
  ASSERT_EQ(events.size(), 40u);
  for (int i = 0; i < 40; ++i) {
    EXPECT_EQ(events[i].at("data").as_string(), absl::StrCat(i, std::string(100'000, 'x')));
  }
}

}  // namespace
}  // namespace keel::daemon_test
