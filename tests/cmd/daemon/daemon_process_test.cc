// The real `keel daemon` binary as a child process: SSE resume across a
// restart on the same data directory, and a graceful SIGTERM shutdown that
// loses no acknowledged event.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/client/errors.h"
#include "keel/cmd/keel/client/follow.h"
#include "keel/core/cursor.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

using ::testing::ElementsAreArray;

class DaemonProcessTest : public ::testing::Test {
 protected:
  DaemonProcessTest() : daemon_(dir_.Sub("data"), dir_.path().string()) {}
  testing::TempDir dir_;
  DaemonProcess daemon_;
};

// Publishes 60 events, reads 25 over SSE, stops the daemon with `signal`,
// starts it again on the same data directory with `flags`, publishes 40
// more and reconnects with the last id seen: the reader must get exactly
// 26..100, in order. Returns the ids of the last event read before the stop
// and of the first read after it.
std::pair<std::string, std::string> ExpectSseResumesAcrossARestart(DaemonProcess& daemon,
                                                                   int signal,
                                                                   std::vector<std::string> flags) {
  EXPECT_OK(daemon.Start(0, flags));
  {
    client::HttpClient http("127.0.0.1", daemon.port());
    for (int i = 0; i < 60; ++i) EXPECT_OK(Publish(http, "orders", "t", absl::StrCat(i)).status());
  }
  std::string last_id;
  {
    client::SseOptions options;
    options.stream = "orders";
    options.after = "earliest";
    absl::StatusOr<std::unique_ptr<client::SseReader>> reader =
        client::SseReader::Open("127.0.0.1", daemon.port(), options);
    EXPECT_OK(reader.status());
    if (!reader.ok()) return {};
    absl::StatusOr<std::vector<client::SseFrame>> frames = ReadEvents(**reader, 25);
    EXPECT_OK(frames.status());
    if (!frames.ok()) return {};
    EXPECT_THAT(SequencesOf(*frames), ElementsAreArray(Range(1, 25)));
    last_id = *frames->back().id;
  }
  absl::StatusOr<int> exit_code = daemon.Terminate(signal);
  if (signal != SIGKILL) {
    EXPECT_EQ(exit_code.value_or(-2), 0) << daemon.Logs();
  }

  EXPECT_OK(daemon.Start(0, flags));  // Same data directory, new port.
  client::HttpClient http("127.0.0.1", daemon.port());
  for (int i = 60; i < 100; ++i) EXPECT_OK(Publish(http, "orders", "t", absl::StrCat(i)).status());
  client::SseOptions options;
  options.stream = "orders";
  options.last_event_id = last_id;
  absl::StatusOr<std::unique_ptr<client::SseReader>> reader =
      client::SseReader::Open("127.0.0.1", daemon.port(), options);
  EXPECT_OK(reader.status()) << daemon.Logs();
  if (!reader.ok()) return {};
  absl::StatusOr<std::vector<client::SseFrame>> rest = ReadEvents(**reader, 75);
  EXPECT_OK(rest.status()) << daemon.Logs();
  if (!rest.ok()) return {};
  EXPECT_THAT(SequencesOf(*rest), ElementsAreArray(Range(26, 100)));
  for (size_t i = 0; i < rest->size(); ++i) {
    EXPECT_EQ(FrameJson((*rest)[i]).at("data").to_number<int>(), static_cast<int>(25 + i));
  }
  EXPECT_THAT(ReadEvents(**reader, 1, absl::Milliseconds(500)),
              keel::testing::StatusIs(absl::StatusCode::kDeadlineExceeded));
  exit_code = daemon.Terminate();
  EXPECT_EQ(exit_code.value_or(-2), 0) << daemon.Logs();
  return {last_id, rest->empty() ? "" : *rest->front().id};
}

TEST_F(DaemonProcessTest, SseResumesWithLastEventIdAcrossARestart) {
  ExpectSseResumesAcrossARestart(daemon_, SIGTERM, {});
}

// A daemon killed while it ran with --sync none lost nothing: its unsynced
// writes were in the kernel, which kept running. The restarted daemon
// says so and keeps the store epoch (a stopped machine would have started
// a new one), so the reader resumes exactly and ids go on in the same epoch.
TEST_F(DaemonProcessTest, SseResumesWithLastEventIdAfterAKillUnderSyncNone) {
  const auto [before, after] = ExpectSseResumesAcrossARestart(daemon_, SIGKILL, {"--sync", "none"});
  ASSERT_OK_AND_ASSIGN(Cursor old_cursor, Cursor::Decode(before));
  ASSERT_OK_AND_ASSIGN(Cursor new_cursor, Cursor::Decode(after));
  EXPECT_EQ(old_cursor.epoch, new_cursor.epoch);
  EXPECT_THAT(daemon_.Logs(), ::testing::HasSubstr("was not closed cleanly"));
  EXPECT_THAT(daemon_.Logs(), ::testing::HasSubstr("the machine has not stopped since"));
}

TEST_F(DaemonProcessTest, FollowerReconnectsOnItsOwnAcrossARestartOnTheSamePort) {
  ASSERT_OK(daemon_.Start());
  const uint16_t port = daemon_.port();
  std::atomic<int> received{0};
  std::vector<uint64_t> sequences;
  absl::Status result;
  std::thread follower([&] {
    client::FollowOptions options;
    options.stream = "live";
    options.after = "earliest";
    options.max_retries = 40;
    options.max_backoff = absl::Seconds(1);
    result = client::FollowStream("127.0.0.1", port, options, [&](const client::SseFrame& frame) {
      sequences.push_back(FrameSequence(frame));
      return received.fetch_add(1) + 1 < 60;
    });
  });
  {
    client::HttpClient http("127.0.0.1", port);
    for (int i = 0; i < 30; ++i) ASSERT_OK(Publish(http, "live", "t", absl::StrCat(i)).status());
  }
  const absl::Time deadline = absl::Now() + kWait;
  while (received.load() < 30 && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(5));
  ASSERT_EQ(received.load(), 30);
  ASSERT_OK_AND_ASSIGN(int exit_code, daemon_.Terminate());
  EXPECT_EQ(exit_code, 0) << daemon_.Logs();
  ASSERT_OK(daemon_.Start(port));
  {
    client::HttpClient http("127.0.0.1", port);
    for (int i = 30; i < 60; ++i) ASSERT_OK(Publish(http, "live", "t", absl::StrCat(i)).status());
  }
  follower.join();
  EXPECT_OK(result);
  EXPECT_EQ(sequences, Range(1, 60));
}

// SIGTERM and SIGINT (Ctrl-C) shut down the same way.
class GracefulShutdownTest : public DaemonProcessTest, public ::testing::WithParamInterface<int> {};

INSTANTIATE_TEST_SUITE_P(Signals, GracefulShutdownTest, ::testing::Values(SIGTERM, SIGINT),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(info.param == SIGTERM ? "Sigterm" : "Sigint");
                         });

TEST_P(GracefulShutdownTest, LosesNoAcknowledgedEvent) {
  ASSERT_OK(daemon_.Start());
  constexpr int kPublishers = 4;
  struct Ack {
    uint64_t sequence;
    std::string id;
    std::string cursor;
  };
  std::vector<std::vector<std::pair<int, Ack>>> acks(kPublishers);  // (n, receipt) per thread.
  std::vector<std::string> stops(kPublishers);
  std::atomic<int> total{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kPublishers; ++t) {
    threads.emplace_back([&, t] {
      client::HttpClient http("127.0.0.1", daemon_.port(),
                              client::ClientOptions{absl::Seconds(5), absl::Seconds(30)});
      for (int n = 0;; ++n) {
        const std::string data = absl::StrCat("{\"t\":", t, ",\"n\":", n, "}");
        absl::StatusOr<PublishedEvent> event = Publish(http, "acks", "t", data);
        if (!event.ok()) {
          stops[t] = std::string(event.status().message());
          return;  // Draining (503) or refused: stop publishing.
        }
        acks[t].emplace_back(n, Ack{event->sequence, event->id, event->cursor});
        total.fetch_add(1);
      }
    });
  }
  const absl::Time deadline = absl::Now() + kWait;
  while (total.load() < 300 && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(2));
  ASSERT_GE(total.load(), 300);
  ASSERT_OK_AND_ASSIGN(int exit_code, daemon_.Terminate(GetParam()));
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(exit_code, 0) << daemon_.Logs();
  for (int t = 0; t < kPublishers; ++t) EXPECT_FALSE(stops[t].empty());

  ASSERT_OK(daemon_.Start());
  client::HttpClient http("127.0.0.1", daemon_.port());
  ASSERT_OK_AND_ASSIGN(std::vector<json::object> stored, ReplayAll(http, "acks"));
  std::map<uint64_t, json::object> by_sequence;
  for (const json::object& event : stored) {
    by_sequence.emplace(event.at("sequence").to_number<uint64_t>(), event);
  }
  // Gap-free from 1.
  ASSERT_FALSE(stored.empty());
  EXPECT_EQ(by_sequence.size(), stored.size());
  EXPECT_EQ(by_sequence.begin()->first, 1u);
  EXPECT_EQ(by_sequence.rbegin()->first, stored.size());
  size_t acknowledged = 0;
  for (int t = 0; t < kPublishers; ++t) {
    for (const auto& [n, ack] : acks[t]) {
      ++acknowledged;
      auto it = by_sequence.find(ack.sequence);
      ASSERT_NE(it, by_sequence.end()) << "acknowledged event " << ack.sequence << " was lost";
      EXPECT_EQ(it->second.at("id").as_string(), ack.id);
      EXPECT_EQ(it->second.at("cursor").as_string(), ack.cursor);
      EXPECT_EQ(it->second.at("data").at("t").to_number<int>(), t);
      EXPECT_EQ(it->second.at("data").at("n").to_number<int>(), n);
    }
  }
  // At most the in-flight, unacknowledged publishes (one per thread) may exist beyond the acks.
  EXPECT_GE(stored.size(), acknowledged);
  EXPECT_LE(stored.size(), acknowledged + kPublishers);
  ASSERT_OK_AND_ASSIGN(exit_code, daemon_.Terminate());
  EXPECT_EQ(exit_code, 0) << daemon_.Logs();
}

TEST_F(DaemonProcessTest, ConfigFileDeclarationsApplyAndADriftStopsTheDaemon) {
  const std::string config = dir_.Sub("keel.conf");
  std::ofstream(config) << "declare = orders max_events=5 dedupe_window=5m\n"
                        << "declare = clicks partitions=4\n"
                        << "default-policy = max_payload_bytes=64KiB\n";
  ASSERT_OK(daemon_.Start(0, {"--config", config}));
  {
    client::HttpClient http("127.0.0.1", daemon_.port());
    ASSERT_OK_AND_ASSIGN(json::value orders, GetJson(http, "/v1/streams/orders"));
    EXPECT_EQ(orders.at("policy").at("retention").at("maxEvents").to_number<uint64_t>(), 5u);
    ASSERT_OK_AND_ASSIGN(json::value partition, GetJson(http, "/v1/streams/clicks:3"));
    EXPECT_EQ(partition.at("policy").at("maxPayloadBytes").to_number<uint64_t>(), 131072u)
        << "a partition takes its topic's policy, not the default";
    ASSERT_OK_AND_ASSIGN(json::value other, GetJson(http, "/v1/streams/other"));
    EXPECT_EQ(other.at("policy").at("maxPayloadBytes").to_number<uint64_t>(), 65536u);
  }
  ASSERT_OK_AND_ASSIGN(int clean, daemon_.Terminate());
  EXPECT_EQ(clean, 0) << daemon_.Logs();

  // The same declarations again start fine; a different one refuses to start.
  ASSERT_OK(daemon_.Start(0, {"--config", config}));
  ASSERT_OK_AND_ASSIGN(int again, daemon_.Terminate());
  EXPECT_EQ(again, 0) << daemon_.Logs();
  absl::Status drift = daemon_.Start(0, {"--declare", "orders max_events=6 dedupe_window=5m"});
  EXPECT_FALSE(drift.ok());
  EXPECT_THAT(std::string(drift.message()), ::testing::HasSubstr("max_events"));
}

}  // namespace
}  // namespace keel::daemon_test
