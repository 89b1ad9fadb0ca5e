// Graceful shutdown of the in-process server: requests that are running on
// the blocking pool when the daemon stops accepting still get their answer.
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/synchronization/notification.h"
#include "tests/cmd/daemon/daemon_fixture.h"
#include "tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

// Holds every publish until `release` is notified; `entered` fires when the
// first publish arrived.
struct Gate {
  absl::Notification entered;
  absl::Notification release;
};

class GatedBus : public EventBus {
 public:
  GatedBus(std::unique_ptr<EventBus> inner, Gate* gate) : inner_(std::move(inner)), gate_(gate) {}

  absl::StatusOr<Receipt> Publish(Event event) override {
    Wait();
    return inner_->Publish(std::move(event));
  }
  absl::StatusOr<std::vector<Receipt>> PublishBatch(absl::string_view stream,
                                                    std::vector<Event> events) override {
    Wait();
    return inner_->PublishBatch(stream, std::move(events));
  }
  absl::StatusOr<std::unique_ptr<Subscription>> Subscribe(const SubscribeOptions& options) override {
    return inner_->Subscribe(options);
  }
  Replayer* replayer() override { return inner_->replayer(); }
  std::string DegradedReason() const override { return inner_->DegradedReason(); }
  absl::Status Close(absl::Duration drain_timeout) override { return inner_->Close(drain_timeout); }

 private:
  void Wait() {
    if (!gate_->entered.HasBeenNotified()) gate_->entered.Notify();
    gate_->release.WaitForNotificationWithTimeout(kWait);
  }

  std::unique_ptr<EventBus> inner_;
  Gate* gate_;
};

TEST(DrainTest, ARequestOnTheBlockingPoolIsAnsweredAfterAcceptingStopped) {
  Gate gate;
  DaemonOptions options;
  options.wrap_bus = [&gate](std::unique_ptr<EventBus> bus) -> std::unique_ptr<EventBus> {
    return std::make_unique<GatedBus>(std::move(bus), &gate);
  };
  InProcessDaemon daemon(options);
  ASSERT_OK(daemon.Start());

  absl::StatusOr<PublishedEvent> published;
  std::thread publisher([&] {
    client::HttpClient http("127.0.0.1", daemon.port(),
                            client::ClientOptions{absl::Seconds(5), absl::Seconds(20)});
    published = Publish(http, "drain", "t", "1");
  });
  ASSERT_TRUE(gate.entered.WaitForNotificationWithTimeout(kWait));
  // The only connection is waiting for its handler on the blocking pool:
  // no socket operation is pending when the acceptor closes.
  daemon.api().SetDraining();
  daemon.server().StopAccepting();
  absl::SleepFor(absl::Milliseconds(200));
  gate.release.Notify();
  EXPECT_TRUE(daemon.server().DrainRequests(absl::Seconds(20)))
      << "the in-flight request never completed: nothing ran its response on the I/O threads";
  publisher.join();
  ASSERT_OK(published.status());
  EXPECT_EQ(published->sequence, 1u);
}

}  // namespace
}  // namespace keel::daemon_test
