// Graceful shutdown of the in-process server: requests that are running on
// the blocking pool, or whose publish is being committed, when the daemon
// stops accepting still get their answer.
#include <memory>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/synchronization/notification.h"
#include "keel/core/forwarding_bus.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/cmd/daemon/raw_connection.h"
#include "keel/tests/testing/status_matchers.h"

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
  // Its publishes block, so the server runs them on the blocking pool.
  bool PublishesAsync() const override { return false; }

 private:
  void Wait() {
    if (!gate_->entered.HasBeenNotified()) gate_->entered.Notify();
    gate_->release.WaitForNotificationWithTimeout(kWait);
  }

  Gate* gate_;
};

// Holds the answer of every asynchronous publish (EventBus::PublishBatchAsync)
// on the bus's committing thread, after the commit.
class GatedAnswersBus : public ForwardingBus {
 public:
  GatedAnswersBus(std::unique_ptr<EventBus> inner, Gate* gate)
      : ForwardingBus(std::move(inner)), gate_(gate) {}

  void PublishBatchAsync(absl::string_view stream, std::vector<Event> events,
                         const PublishOptions& options, PublishDone done) override {
    ForwardingBus::PublishBatchAsync(
        stream, std::move(events), options,
        [gate = gate_, done = std::move(done)](absl::StatusOr<std::vector<Receipt>> receipts) {
          if (!gate->entered.HasBeenNotified()) gate->entered.Notify();
          gate->release.WaitForNotificationWithTimeout(kWait);
          done(std::move(receipts));
        });
  }

 private:
  Gate* gate_;
};

// Daemon options whose bus is wrapped in `GatedWrapper` over `gate`.
template <typename GatedWrapper>
DaemonOptions GatedOptions(Gate& gate) {
  DaemonOptions options;
  options.wrap_bus = [&gate](std::unique_ptr<EventBus> bus) -> std::unique_ptr<EventBus> {
    return std::make_unique<GatedWrapper>(std::move(bus), &gate);
  };
  return options;
}

// One publish to "drain", on its own connection and thread.
class BackgroundPublish {
 public:
  explicit BackgroundPublish(const InProcessDaemon& daemon)
      : thread_([this, port = daemon.port()] {
          client::HttpClient http("127.0.0.1", port,
                                  client::ClientOptions{absl::Seconds(5), absl::Seconds(20)});
          result_ = Publish(http, "drain", "t", "1");
        }) {}
  ~BackgroundPublish() {
    if (thread_.joinable()) thread_.join();
  }

  // Waits for the publish's answer.
  absl::StatusOr<PublishedEvent> Result() {
    thread_.join();
    return result_;
  }

 private:
  absl::StatusOr<PublishedEvent> result_;  // Before thread_, which writes it.
  std::thread thread_;
};

// Publishes one event while `gate` holds it, stops accepting, releases the
// gate: the publish must still be answered, and stored.
void ExpectAnsweredAfterAcceptingStopped(InProcessDaemon& daemon, Gate& gate) {
  BackgroundPublish publish(daemon);
  ASSERT_TRUE(gate.entered.WaitForNotificationWithTimeout(kWait));
  // The only connection is waiting for its answer: no socket operation is
  // pending when the acceptor closes.
  daemon.api().SetDraining();
  daemon.server().StopAccepting();
  absl::SleepFor(absl::Milliseconds(200));
  gate.release.Notify();
  EXPECT_TRUE(daemon.server().DrainRequests(absl::Seconds(20)))
      << "the in-flight request never completed: nothing ran its response on the I/O threads";
  ASSERT_OK_AND_ASSIGN(PublishedEvent published, publish.Result());
  EXPECT_EQ(published.sequence, 1u);
}

TEST(DrainTest, APublishBeingCommittedIsAnsweredAfterAcceptingStopped) {
  Gate gate;
  // Durable, sync=always: publishes are committed asynchronously.
  InProcessDaemon daemon(GatedOptions<GatedAnswersBus>(gate));
  ASSERT_OK(daemon.Start());
  ASSERT_TRUE(daemon.bus().PublishesAsync());
  ExpectAnsweredAfterAcceptingStopped(daemon, gate);
}

TEST(DrainTest, ARequestOnTheBlockingPoolIsAnsweredAfterAcceptingStopped) {
  Gate gate;
  InProcessDaemon daemon(GatedOptions<GatedBus>(gate));
  ASSERT_OK(daemon.Start());
  ExpectAnsweredAfterAcceptingStopped(daemon, gate);
}

// The idle timeout (100 ms here) applies to reading a request and writing
// its answer, not to the handler in between. A daemon whose publishes are
// held at a gate; HoldPastTheTimeout keeps the first one five timeouts.
class HeldPublishTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DaemonOptions options = GatedOptions<GatedBus>(gate_);
    options.server.idle_timeout = absl::Milliseconds(100);
    daemon_ = std::make_unique<InProcessDaemon>(options);
    ASSERT_OK(daemon_->Start());
  }

  void HoldPastTheTimeout() {
    ASSERT_TRUE(gate_.entered.WaitForNotificationWithTimeout(kWait));
    absl::SleepFor(absl::Milliseconds(500));
    gate_.release.Notify();
  }

  Gate gate_;
  std::unique_ptr<InProcessDaemon> daemon_;
};

TEST_F(HeldPublishTest, APublishHeldPastTheIdleTimeoutIsStillAnswered) {
  BackgroundPublish publish(*daemon_);
  ASSERT_NO_FATAL_FAILURE(HoldPastTheTimeout());
  ASSERT_OK_AND_ASSIGN(PublishedEvent published, publish.Result());
  EXPECT_EQ(published.sequence, 1u);
}

// After the held publish is answered, the connection's idle timeout runs
// again: left idle, it is closed.
TEST_F(HeldPublishTest, AConnectionIdleAfterAHeldPublishIsClosed) {
  RawConnection connection(daemon_->port());
  ASSERT_TRUE(connection.connected());
  connection.Send(RawPublishRequest("drain", R"({"type":"t","data":1})"));
  ASSERT_NO_FATAL_FAILURE(HoldPastTheTimeout());
  EXPECT_THAT(connection.Read(), ::testing::StartsWith("HTTP/1.1 201"));
  EXPECT_EQ(connection.Read(), "") << "the idle connection was left open";
}

// A request that arrives while the previous one is in its handler, when the
// daemon is not reading the connection, is read once the first is
// answered: its arrival is not lost.
TEST_F(HeldPublishTest, ARequestSentWhileThePreviousIsHeldIsAnswered) {
  RawConnection connection(daemon_->port());
  ASSERT_TRUE(connection.connected());
  connection.Send(RawPublishRequest("drain", R"({"type":"t","data":1})"));
  ASSERT_TRUE(gate_.entered.WaitForNotificationWithTimeout(kWait));
  connection.Send(kRawHealthz);
  absl::SleepFor(absl::Milliseconds(50));  // Lets it reach the daemon's socket first.
  gate_.release.Notify();

  const std::vector<std::string> responses = connection.ReadResponses(2);
  ASSERT_EQ(responses.size(), 2u);
  EXPECT_THAT(responses[0], ::testing::StartsWith("201"));
  EXPECT_THAT(responses[1], ::testing::StartsWith("200"));
}

// The grace period ends while a publish is committed but not yet answered:
// Server::Stop keeps the I/O threads until its answer is written.
TEST(DrainTest, StopWaitsForAPublishAnsweredAfterTheGracePeriod) {
  Gate gate;
  InProcessDaemon daemon(GatedOptions<GatedAnswersBus>(gate));
  ASSERT_OK(daemon.Start());
  BackgroundPublish publish(daemon);
  ASSERT_TRUE(gate.entered.WaitForNotificationWithTimeout(kWait));
  // The daemon's shutdown with a short grace period (cmd/keel/daemon_command.cc).
  daemon.api().SetDraining();
  daemon.server().StopAccepting();
  EXPECT_FALSE(daemon.server().DrainRequests(absl::Milliseconds(100)));
  daemon.bus().Close(absl::Milliseconds(100)).IgnoreError();
  std::thread stop([&] { daemon.server().Stop(absl::Milliseconds(100)); });
  absl::SleepFor(absl::Milliseconds(200));
  gate.release.Notify();
  stop.join();
  ASSERT_OK_AND_ASSIGN(PublishedEvent published, publish.Result());
  EXPECT_EQ(published.sequence, 1u);
}

}  // namespace
}  // namespace keel::daemon_test
