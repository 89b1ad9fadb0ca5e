// The jetstream driver's NatsClient keeps many requests in flight on its one
// connection (drivers/jetstream/request_mux.h). Against a real nats-server and
// a responder on a plain nats.c connection: each of many waiting requests gets
// its own reply whatever order the replies come in; a reply that comes after
// its request timed out reaches no other request; a subject nobody serves is
// "no responders"; and closing the client answers the requests still waiting.
#include <gtest/gtest.h>
#include <nats/nats.h>

#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "keel/drivers/jetstream/nats_client.h"
#include "keel/tests/jetstream/jetstream_environment.h"

namespace keel::jetstream::testing {
namespace {

// A request as the responder received it.
struct Received {
  std::string reply;  // Where to answer.
  std::string data;
};

// Holds the requests of one subject until the test answers them.
class Responder {
 public:
  explicit Responder(const std::string& subject) {
    const std::string servers = SharedCluster()->servers();
    EXPECT_EQ(natsConnection_ConnectTo(&connection_, servers.c_str()), NATS_OK);
    EXPECT_EQ(natsConnection_SubscribeSync(&sub_, connection_, subject.c_str()), NATS_OK);
    // The subscription reaches the server before any request is sent.
    EXPECT_EQ(natsConnection_Flush(connection_), NATS_OK);
  }
  ~Responder() {
    natsSubscription_Destroy(sub_);
    natsConnection_Destroy(connection_);
  }

  // The next `n` requests, in the order they arrived.
  std::vector<Received> Collect(size_t n) {
    std::vector<Received> out;
    while (out.size() < n) {
      natsMsg* msg = nullptr;
      if (natsSubscription_NextMsg(&msg, sub_, 30'000) != NATS_OK) {
        ADD_FAILURE() << "only " << out.size() << " of " << n << " requests arrived";
        return out;
      }
      out.push_back(Received{natsMsg_GetReply(msg),
                             std::string(natsMsg_GetData(msg), natsMsg_GetDataLength(msg))});
      natsMsg_Destroy(msg);
    }
    return out;
  }

  void Answer(const Received& request, const std::string& data) {
    EXPECT_EQ(natsConnection_PublishString(connection_, request.reply.c_str(), data.c_str()),
              NATS_OK);
    EXPECT_EQ(natsConnection_Flush(connection_), NATS_OK);
  }

 private:
  natsConnection* connection_ = nullptr;
  natsSubscription* sub_ = nullptr;
};

std::unique_ptr<NatsClient> Connect() {
  NatsClientOptions options;
  options.servers = {SharedCluster()->servers()};
  absl::StatusOr<std::unique_ptr<NatsClient>> client = NatsClient::Connect(options);
  EXPECT_TRUE(client.ok()) << client.status();
  return client.ok() ? *std::move(client) : nullptr;
}

TEST(RequestMuxTest, RepliesAnsweredInReverseOrderReachTheirOwnRequests) {
  Responder responder("mux.reverse");
  std::unique_ptr<NatsClient> client = Connect();
  ASSERT_NE(client, nullptr);
  constexpr int kRequests = 16;
  std::vector<NatsReply> replies(kRequests);
  std::vector<std::thread> requesters;
  for (int i = 0; i < kRequests; ++i) {
    requesters.emplace_back([&, i] {
      replies[i] =
          client->Request("mux.reverse", {}, absl::StrCat("request ", i), absl::Seconds(30));
    });
  }
  // All of them are in flight before the first is answered.
  std::vector<Received> received = responder.Collect(kRequests);
  for (auto it = received.rbegin(); it != received.rend(); ++it) {
    responder.Answer(*it, absl::StrCat("answer to ", it->data));
  }
  for (std::thread& requester : requesters) requester.join();
  for (int i = 0; i < kRequests; ++i) {
    EXPECT_EQ(replies[i].kind, NatsReply::Kind::kReplied) << replies[i].problem;
    EXPECT_EQ(replies[i].data, absl::StrCat("answer to request ", i));
  }
}

TEST(RequestMuxTest, AReplyAfterItsRequestTimedOutReachesNoOtherRequest) {
  Responder responder("mux.late");
  std::unique_ptr<NatsClient> client = Connect();
  ASSERT_NE(client, nullptr);
  const NatsReply first = client->Request("mux.late", {}, "first", absl::Milliseconds(200));
  EXPECT_EQ(first.kind, NatsReply::Kind::kTimedOut);
  const Received late = responder.Collect(1).at(0);

  NatsReply second;
  std::thread requester(
      [&] { second = client->Request("mux.late", {}, "second", absl::Seconds(30)); });
  const Received waiting = responder.Collect(1).at(0);
  responder.Answer(late, "too late for the first");
  responder.Answer(waiting, "for the second");
  requester.join();
  EXPECT_EQ(second.kind, NatsReply::Kind::kReplied) << second.problem;
  EXPECT_EQ(second.data, "for the second");
}

TEST(RequestMuxTest, ASubjectNobodyServesAnswersNoResponders) {
  std::unique_ptr<NatsClient> client = Connect();
  ASSERT_NE(client, nullptr);
  const NatsReply reply = client->Request("mux.nobody", {}, "hello", absl::Seconds(30));
  EXPECT_EQ(reply.kind, NatsReply::Kind::kNoResponders) << reply.problem;
}

TEST(RequestMuxTest, ClosingTheClientAnswersTheRequestsStillWaiting) {
  Responder responder("mux.unanswered");
  std::unique_ptr<NatsClient> client = Connect();
  ASSERT_NE(client, nullptr);
  NatsReply reply;
  std::thread requester(
      [&] { reply = client->Request("mux.unanswered", {}, "hello", absl::Minutes(5)); });
  responder.Collect(1);  // In flight, and never answered.
  client->Close();
  requester.join();
  EXPECT_EQ(reply.kind, NatsReply::Kind::kClosed);
  EXPECT_EQ(client->Request("mux.unanswered", {}, "after", absl::Seconds(30)).kind,
            NatsReply::Kind::kClosed);
}

}  // namespace
}  // namespace keel::jetstream::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new keel::jetstream::testing::JetStreamEnvironment(1));
  return RUN_ALL_TESTS();
}
