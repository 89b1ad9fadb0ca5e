// Graceful shutdown of the in-process server: requests that are running on
// the blocking pool when the daemon stops accepting still get their answer.
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/synchronization/notification.h"
#include "core/forwarding_bus.h"
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

class GatedBus : public ForwardingBus {
 public:
  GatedBus(std::unique_ptr<EventBus> inner, Gate* gate) : ForwardingBus(std::move(inner)), gate_(gate) {}

  using ForwardingBus::Publish;
  using ForwardingBus::PublishBatch;
  absl::StatusOr<Receipt> Publish(Event event, const PublishOptions& options) override {
    Wait();
    return ForwardingBus::Publish(std::move(event), options);
  }
  absl::StatusOr<std::vector<Receipt>> PublishBatch(absl::string_view stream,
                                                    std::vector<Event> events,
                                                    const PublishOptions& options) override {
    Wait();
    return ForwardingBus::PublishBatch(stream, std::move(events), options);
  }

 private:
  void Wait() {
    if (!gate_->entered.HasBeenNotified()) gate_->entered.Notify();
    gate_->release.WaitForNotificationWithTimeout(kWait);
  }

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
