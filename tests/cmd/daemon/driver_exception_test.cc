// A host's driver that throws: the daemon answers 500 `internal` to the
// requests the exception interrupted and to no others, stores what it
// acknowledged, and goes on serving (cmd/keel/server/api.h). Without the
// catches, an exception on the blocking pool ends the process.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "absl/strings/str_cat.h"
#include "keel/core/forwarding_bus.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

using ::testing::HasSubstr;

constexpr char kBroken[] = "broken";

// Throws from every call that names the stream "broken".
class ThrowingBus : public ForwardingBus {
 public:
  using EventBus::Publish;
  using EventBus::PublishBatch;
  using ForwardingBus::ForwardingBus;

  absl::StatusOr<Receipt> Publish(Event event, const PublishOptions& options) override {
    ThrowFor(event.stream);
    return ForwardingBus::Publish(std::move(event), options);
  }
  absl::StatusOr<std::vector<Receipt>> PublishBatch(absl::string_view stream,
                                                    std::vector<Event> events,
                                                    const PublishOptions& options) override {
    ThrowFor(stream);
    return ForwardingBus::PublishBatch(stream, std::move(events), options);
  }
  void PublishBatchAsync(absl::string_view stream, std::vector<Event> events,
                         const PublishOptions& options, PublishDone done) override {
    ThrowFor(stream);
    ForwardingBus::PublishBatchAsync(stream, std::move(events), options, std::move(done));
  }
  absl::StatusOr<std::unique_ptr<Subscription>> Subscribe(
      const SubscribeOptions& options) override {
    ThrowFor(options.stream);
    return ForwardingBus::Subscribe(options);
  }
  absl::Status Declare(absl::string_view stream, const StreamPolicy& policy) override {
    ThrowFor(stream);
    return ForwardingBus::Declare(stream, policy);
  }

 private:
  static void ThrowFor(absl::string_view stream) {
    if (stream == kBroken) throw std::runtime_error("the driver gave up");
  }
};

server::HttpRequest PublishRequest(const std::string& stream) {
  server::HttpRequest request;
  request.method = "POST";
  request.path = absl::StrCat("/v1/streams/", stream, "/events");
  request.segments = {"v1", "streams", stream, "events"};
  request.headers.Add("content-type", "application/json");
  request.body = R"({"type":"t","data":1})";
  return request;
}

class DriverExceptionTest : public ::testing::Test {
 protected:
  static DaemonOptions Options() {
    DaemonOptions options;
    options.wrap_bus = [](std::unique_ptr<EventBus> bus) -> std::unique_ptr<EventBus> {
      return std::make_unique<ThrowingBus>(std::move(bus));
    };
    return options;
  }

  void SetUp() override {
    ASSERT_OK(daemon_.Start());
    http_ = daemon_.NewClient();
  }

  uint64_t Count(const std::string& stream) {
    absl::StatusOr<StreamInfo> info = daemon_.bus().replayer()->Bounds(stream);
    EXPECT_OK(info);
    return info.ok() ? info->count : 0;
  }

  void ExpectInternal(const absl::StatusOr<client::ClientResponse>& response) {
    ASSERT_OK(response);
    EXPECT_EQ(response->status, 500) << response->body;
    EXPECT_EQ(ErrorCode(*response), "internal");
    EXPECT_THAT(response->body, HasSubstr("the driver gave up"));
  }

  InProcessDaemon daemon_{Options()};
  std::unique_ptr<client::HttpClient> http_;
};

TEST_F(DriverExceptionTest, JoinedPublishesFailOnlyOnTheStreamWhoseDriverThrew) {
  const std::vector<server::HttpRequest> requests = {
      PublishRequest("orders"), PublishRequest(kBroken), PublishRequest("orders")};
  std::vector<server::RoutedRequest> routed;
  for (const server::HttpRequest& request : requests) {
    routed.push_back(server::Api::Routed(request));
  }

  std::vector<server::HttpResponse> responses = daemon_.api().HandleAll(routed);

  ASSERT_EQ(responses.size(), 3u);
  EXPECT_EQ(responses[0].status, 201) << responses[0].body;
  EXPECT_EQ(responses[1].status, 500) << responses[1].body;
  EXPECT_THAT(responses[1].body, HasSubstr("\"internal\""));
  EXPECT_EQ(responses[2].status, 201) << responses[2].body;
  EXPECT_EQ(Count("orders"), 2u) << "both acknowledged publishes are stored";
}

TEST_F(DriverExceptionTest, EveryRouteAnswers500AndTheDaemonGoesOnServing) {
  const std::string broken = absl::StrCat("/v1/streams/", kBroken);
  ExpectInternal(http_->PostJson(broken + "/events", R"({"type":"t","data":1})"));
  ExpectInternal(http_->Request("PUT", broken, R"({"retention":{"maxEvents":10}})",
                                {{"Content-Type", "application/json"}}));
  ExpectInternal(http_->Get(broken + "/sse"));

  ASSERT_OK_AND_ASSIGN(PublishedEvent event, Publish(*http_, "orders", "t", "1"));
  EXPECT_EQ(event.sequence, 1u);
  ASSERT_OK_AND_ASSIGN(client::ClientResponse metrics, http_->Get("/metrics"));
  EXPECT_THAT(metrics.body, HasSubstr("keel_errors_total{code=\"internal\"} 3\n"));
}

}  // namespace
}  // namespace keel::daemon_test
