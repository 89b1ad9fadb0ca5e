// SIGKILL of the `keel daemon` process in the middle of delivery, again and
// again: every event still reaches the receiver, each request holds
// consecutive events of its stream, and no request ever starts past the
// events the receiver has seen (nothing skipped). Repeats are only the
// batch a kill caught uncommitted: at most one rewind per restart, never
// back by more than one batch.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/push/push_daemon.h"

namespace keel::push_test {
namespace {

constexpr int kKills = 10;
constexpr int kEventsPerRound = 40;
constexpr int kBatch = 7;

TEST(PushCrashTest, SigkillMidDeliveryNeitherSkipsNorReorders) {
  testing::TempDir dir;
  // A little slow, so that kills land while batches are in flight.
  TestReceiver receiver([](const ReceivedRequest&, int) {
    return Reply{200, {}, absl::Milliseconds(15)};
  });
  std::filesystem::create_directories(dir.Sub("logs"));
  daemon_test::DaemonProcess daemon(dir.Sub("data"), dir.Sub("logs"));
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Logs();
  const uint16_t port = daemon.port();
  {
    client::HttpClient http("127.0.0.1", port);
    json::object d;
    d["name"] = "crashy";
    d["streams"] = "orders";
    d["endpoint"] = receiver.url();
    d["batchSize"] = kBatch;
    d["secrets"] = json::array{"0123456789abcdef-secret"};
    absl::StatusOr<client::ClientResponse> created = CreateSubscription(http, d);
    ASSERT_TRUE(created.ok() && created->status == 201) << daemon.Logs();
  }
  int published = 0;
  for (int round = 0; round < kKills; ++round) {
    client::HttpClient http("127.0.0.1", port);
    for (int i = 0; i < kEventsPerRound; ++i) {
      ASSERT_TRUE(PublishN(http, "orders", "order.created", ++published).ok());
    }
    const size_t seen = receiver.requests().size();
    ASSERT_TRUE(receiver.WaitFor([&](const auto& r) { return r.size() > seen; }, kWait));
    ASSERT_TRUE(daemon.Terminate(SIGKILL).ok());
    ASSERT_TRUE(daemon.Start(port).ok()) << daemon.Logs();
  }
  ASSERT_TRUE(receiver.WaitFor(
      [&](const auto& r) {
        std::set<uint64_t> got;
        for (const Delivered& e : Acknowledged(r)) got.insert(e.sequence);
        return got.size() == static_cast<size_t>(published);
      },
      kWait))
      << daemon.Logs();
  uint64_t highest = 0;
  int rewinds = 0;  // Requests that start at an event already received.
  for (const ReceivedRequest& request : receiver.requests()) {
    const std::vector<Delivered> events = EventsOf(request);
    ASSERT_FALSE(events.empty());
    EXPECT_LE(events.front().sequence, highest + 1) << "a request skipped events";
    if (events.front().sequence <= highest) {
      ++rewinds;
      EXPECT_LE(highest - events.front().sequence + 1, static_cast<uint64_t>(kBatch))
          << "a restart repeated more than the batch in flight";
    }
    for (size_t i = 1; i < events.size(); ++i) {
      EXPECT_EQ(events[i].sequence, events[i - 1].sequence + 1);
    }
    highest = std::max(highest, events.back().sequence);
  }
  EXPECT_EQ(highest, static_cast<uint64_t>(published));
  EXPECT_LE(rewinds, kKills) << "events were repeated without a restart";
  ASSERT_TRUE(daemon.Terminate(SIGTERM).ok());
}

}  // namespace
}  // namespace keel::push_test
