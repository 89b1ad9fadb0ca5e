// Publishes read together are committed together (Api::HandleAll, the
// server's PublishCoalescer): one store write for many requests, yet each
// request is answered exactly as if it had been alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "keel/core/mutex.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

using ::testing::HasSubstr;

server::HttpRequest PublishRequest(const std::string& stream, std::string body,
                                   std::map<std::string, std::string> headers = {}) {
  server::HttpRequest request;
  request.method = "POST";
  request.path = absl::StrCat("/v1/streams/", stream, "/events");
  request.segments = {"v1", "streams", stream, "events"};
  for (const auto& [name, value] : headers) request.headers.Add(name, value);
  request.headers.Add("content-type", "application/json");
  request.body = std::move(body);
  return request;
}

std::string Event(int n) { return absl::StrCat(R"({"type":"t","data":)", n, "}"); }

uint64_t SequenceOf(const server::HttpResponse& response) {
  return json::parse(response.body).at("sequence").to_number<uint64_t>();
}

// Each pass runs through Api::HandleAll (blocking) and, with the parameter,
// through Api::HandleAllAsync (the daemon's path with sync=always): both must
// answer alike.
class JoinedPublishTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { ASSERT_OK(daemon_.Start()); }
  void TearDown() override {
    MutexLock lock(&threads_mu_);
    for (std::thread& thread : threads_) thread.join();
  }

  std::vector<server::HttpResponse> HandleAll(const std::vector<server::HttpRequest>& requests) {
    std::vector<server::RoutedRequest> routed;
    for (const server::HttpRequest& request : requests) {
      routed.push_back(server::Api::Routed(request));
    }
    if (!GetParam()) return daemon_.api().HandleAll(routed);
    EXPECT_TRUE(daemon_.api().PublishesAsync());
    auto run = [this](std::function<void()> task) {
      MutexLock lock(&threads_mu_);
      threads_.emplace_back(std::move(task));
    };
    auto answered = std::make_shared<
        std::pair<Notification, std::vector<server::HttpResponse>>>();
    daemon_.api().HandleAllAsync(routed, run, run,
                                 [answered](std::vector<server::HttpResponse> responses) {
                                   answered->second = std::move(responses);
                                   answered->first.Notify();
                                 });
    EXPECT_TRUE(answered->first.WaitForNotificationWithTimeout(kWait));
    return answered->second;
  }

  uint64_t StoreWrites() { return daemon_.metrics().store_write_latency().count(); }

  InProcessDaemon daemon_;
  // The executors HandleAllAsync was given: a thread per task.
  Mutex threads_mu_;
  std::vector<std::thread> threads_;
};

// Over real sockets, where the server picks the path itself: the daemon
// as `keel daemon` runs it with `--sync always` (the driver's committer
// thread) or `--sync none` (passes committed on the I/O thread, large ones
// through the committer thread).
class JoinedPublishOverHttpTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    DaemonOptions options;
    options.config.Set("sync", GetParam());
    options.server.inline_publishes = GetParam() == "none";  // As `keel daemon` decides.
    daemon_ = std::make_unique<InProcessDaemon>(std::move(options));
    ASSERT_OK(daemon_->Start());
  }

  std::unique_ptr<InProcessDaemon> daemon_;
};

TEST_P(JoinedPublishTest, PublishesToOneStreamShareOneStoreWriteInRequestOrder) {
  std::vector<server::HttpRequest> requests;
  for (int i = 0; i < 10; ++i) requests.push_back(PublishRequest("orders", Event(i)));
  requests.push_back(PublishRequest("orders", absl::StrCat("[", Event(10), ",", Event(11), "]")));
  const uint64_t writes_before = StoreWrites();

  std::vector<server::HttpResponse> responses = HandleAll(requests);

  EXPECT_EQ(StoreWrites() - writes_before, 1u);
  ASSERT_EQ(responses.size(), requests.size());
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(responses[i].status, 201) << responses[i].body;
    EXPECT_EQ(SequenceOf(responses[i]), static_cast<uint64_t>(i + 1));
  }
  ASSERT_EQ(responses[10].status, 201) << responses[10].body;
  const json::array receipts = json::parse(responses[10].body).at("receipts").as_array();
  ASSERT_EQ(receipts.size(), 2u);
  EXPECT_EQ(receipts[0].at("sequence").to_number<uint64_t>(), 11u);
  EXPECT_EQ(receipts[1].at("sequence").to_number<uint64_t>(), 12u);
}

TEST_P(JoinedPublishTest, ABadEventFailsOnlyItsOwnRequestAndLeavesNoGap) {
  std::vector<server::HttpRequest> requests;
  requests.push_back(PublishRequest("orders", Event(1)));
  // Valid JSON, so it is joined; the bus refuses it (a type is required).
  requests.push_back(PublishRequest("orders", R"({"type":"","data":2})"));
  requests.push_back(PublishRequest("orders", Event(3)));

  std::vector<server::HttpResponse> responses = HandleAll(requests);

  ASSERT_EQ(responses[0].status, 201) << responses[0].body;
  EXPECT_EQ(responses[1].status, 400) << responses[1].body;
  EXPECT_THAT(responses[1].body, HasSubstr("invalid_argument"));
  ASSERT_EQ(responses[2].status, 201) << responses[2].body;
  EXPECT_EQ(SequenceOf(responses[0]), 1u);
  EXPECT_EQ(SequenceOf(responses[2]), 2u);
  ASSERT_OK_AND_ASSIGN(StreamInfo info, daemon_.bus().replayer()->Bounds("orders"));
  EXPECT_EQ(info.count, 2u);
  EXPECT_EQ(info.last_sequence, 2u);
}

TEST_P(JoinedPublishTest, AnIdempotencyKeySeenEarlierInTheSamePassIsADuplicate) {
  std::vector<server::HttpRequest> requests;
  requests.push_back(PublishRequest("orders", Event(1), {{"idempotency-key", "k1"}}));
  requests.push_back(PublishRequest("orders", Event(2), {{"idempotency-key", "k1"}}));

  std::vector<server::HttpResponse> responses = HandleAll(requests);

  ASSERT_EQ(responses[1].status, 201) << responses[1].body;
  const json::value first = json::parse(responses[0].body);
  const json::value second = json::parse(responses[1].body);
  EXPECT_FALSE(first.at("duplicate").as_bool());
  EXPECT_TRUE(second.at("duplicate").as_bool());
  EXPECT_EQ(second.at("sequence"), first.at("sequence"));
  EXPECT_EQ(second.at("id"), first.at("id"));
}

TEST_P(JoinedPublishTest, OtherStreamsAndRequestsAreAnsweredApart) {
  std::vector<server::HttpRequest> requests;
  requests.push_back(PublishRequest("a", Event(1)));
  requests.push_back(PublishRequest("b", Event(2)));
  requests.push_back(
      PublishRequest("a", Event(3), {{"keel-expected-last-sequence", "7"}}));  // Stale: alone.
  server::HttpRequest bounds;
  bounds.method = "GET";
  bounds.path = "/v1/streams/a";
  bounds.segments = {"v1", "streams", "a"};
  requests.push_back(bounds);

  std::vector<server::HttpResponse> responses = HandleAll(requests);

  EXPECT_EQ(SequenceOf(responses[0]), 1u);
  EXPECT_EQ(SequenceOf(responses[1]), 1u);
  EXPECT_EQ(responses[2].status, 409) << responses[2].body;
  EXPECT_THAT(responses[2].body, HasSubstr("conflict"));
  EXPECT_EQ(responses[3].status, 200) << responses[3].body;
  ASSERT_OK_AND_ASSIGN(StreamInfo info, daemon_.bus().replayer()->Bounds("a"));
  EXPECT_EQ(info.count, 1u);
}

// The metrics count joined publishes as they count single ones: each
// request once, its events, and a refused one as an error of its code.
TEST_P(JoinedPublishTest, MetricsCountEachJoinedRequest) {
  std::vector<server::HttpRequest> requests;
  for (int i = 0; i < 3; ++i) requests.push_back(PublishRequest("orders", Event(i)));
  requests.push_back(PublishRequest("orders", absl::StrCat("[", Event(3), ",", Event(4), "]")));
  requests.push_back(PublishRequest("orders", R"({"type":"","data":5})"));  // Refused by the bus.

  HandleAll(requests);

  const std::string metrics = daemon_.metrics().Render();
  EXPECT_THAT(metrics, HasSubstr("keel_http_requests_total 5\n"));
  EXPECT_THAT(metrics, HasSubstr("keel_published_events_total 5\n"));
  EXPECT_THAT(metrics, HasSubstr("keel_errors_total{code=\"invalid_argument\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("keel_publish_latency_seconds_count 4\n"));
}

TEST_P(JoinedPublishTest, AnEmptyBatchIsRefusedEvenAmongOthers) {
  std::vector<server::HttpRequest> requests;
  requests.push_back(PublishRequest("orders", Event(1)));
  requests.push_back(PublishRequest("orders", "[]"));

  std::vector<server::HttpResponse> responses = HandleAll(requests);

  EXPECT_EQ(responses[0].status, 201) << responses[0].body;
  EXPECT_EQ(responses[1].status, 400) << responses[1].body;
  EXPECT_THAT(responses[1].body, HasSubstr("at least one event"));
}

// Events per batch of PublishOneOrBatch: about 20 KB of body, a large pass.
constexpr int kBatchEvents = 150;

// Publishes one event with data `data` (a JSON string), or with `batch` a
// batch of kBatchEvents whose data are `data` + " #k " + padding, whose
// events must get consecutive sequences. Returns the sequence each event
// got with its data, none if the publish failed.
std::vector<std::pair<uint64_t, std::string>> PublishOneOrBatch(client::HttpClient& http,
                                                                const std::string& stream,
                                                                const std::string& data,
                                                                bool batch) {
  std::vector<std::pair<uint64_t, std::string>> published;
  if (!batch) {
    const std::string json_data = absl::StrCat("\"", data, "\"");
    absl::StatusOr<PublishedEvent> event = Publish(http, stream, "t", json_data);
    if (event.ok()) published.emplace_back(event->sequence, json_data);
    return published;
  }
  std::string body = "[";
  std::vector<std::string> datas;
  for (int k = 0; k < kBatchEvents; ++k) {
    datas.push_back(absl::StrCat("\"", data, " #", k, " ", std::string(100, 'x'), "\""));
    absl::StrAppend(&body, k > 0 ? "," : "", R"({"type":"t","data":)", datas.back(), "}");
  }
  body += "]";
  absl::StatusOr<client::ClientResponse> response = PostEvents(http, stream, body);
  if (!response.ok() || response->status != 201) return published;
  const json::value answer = json::parse(response->body);
  const json::array& receipts = answer.at("receipts").as_array();
  for (size_t k = 0; k < std::min(receipts.size(), datas.size()); ++k) {
    published.emplace_back(receipts[k].at("sequence").to_number<uint64_t>(), datas[k]);
    EXPECT_EQ(published[k].first, published[0].first + k) << "a batch stored apart";
  }
  return published;
}

// Concurrent publishers on many connections (joined by the server in
// whatever passes the I/O threads read them) each get the receipts of their
// own events, and the stream holds exactly what was acknowledged. Clients
// publish to two streams at once, so a pass carries publishes of both and
// they are committed per stream; every fifth publish is a batch, so some
// passes are large and others small.
TEST_P(JoinedPublishOverHttpTest, ConcurrentPublishersEachGetTheirOwnReceipts) {
  constexpr int kClients = 8;
  constexpr int kEach = 50;
  constexpr int kBatchEvery = 5;
  constexpr size_t kPerClient = kEach / kBatchEvery * kBatchEvents + kEach - kEach / kBatchEvery;
  const std::string kStreams[] = {"load-a", "load-b"};
  auto stream_of = [&](int client) { return kStreams[client % 2]; };
  // Per client: the sequence each of its events got, and the data sent.
  std::vector<std::vector<std::pair<uint64_t, std::string>>> receipts(kClients);
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      std::unique_ptr<client::HttpClient> http = daemon_->NewClient();
      for (int i = 0; i < kEach; ++i) {
        for (auto& receipt : PublishOneOrBatch(*http, stream_of(c),
                                               absl::StrCat("client ", c, " event ", i),
                                               i % kBatchEvery == kBatchEvery - 1)) {
          receipts[c].push_back(std::move(receipt));
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  std::map<std::string, std::map<uint64_t, std::string>> stored;
  for (const std::string& stream : kStreams) {
    ReplayRequest replay;
    replay.stream = stream;
    replay.after = Position::Earliest();
    replay.limit = kClients / 2 * kPerClient + 1;
    ASSERT_OK_AND_ASSIGN(ReplayPage page, daemon_->bus().replayer()->Replay(replay));
    ASSERT_EQ(page.events.size(), kClients / 2 * kPerClient) << stream;
    ASSERT_EQ(page.events.back().sequence, kClients / 2 * kPerClient) << "a gap in " << stream;
    for (const keel::Event& event : page.events) stored[stream][event.sequence] = event.payload;
  }
  for (int c = 0; c < kClients; ++c) {
    ASSERT_EQ(receipts[c].size(), kPerClient) << "client " << c;
    for (const auto& [sequence, data] : receipts[c]) {
      EXPECT_EQ(stored[stream_of(c)][sequence], data);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SyncModes, JoinedPublishOverHttpTest,
                         ::testing::Values("always", "none"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return "Sync" + info.param;
                         });

INSTANTIATE_TEST_SUITE_P(BlockingAndAsync, JoinedPublishTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Async" : "Blocking";
                         });

}  // namespace
}  // namespace keel::daemon_test
