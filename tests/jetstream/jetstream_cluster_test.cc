// The jetstream driver on a three-node nats-server cluster with replicated
// (R3) streams: racing conditional appends from many daemons, the stream
// leader killed under publishers, and the loss of quorum. The cluster is
// shared by the tests; each leaves every node running.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"
#include "keel/core/mutex.h"
#include "keel/tests/jetstream/jetstream_environment.h"
#include "keel/tests/jetstream/jetstream_test_util.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::jetstream::testing {
namespace {

using ::keel::testing::HasErrorKind;
using ::testing::IsEmpty;

// A bus of its own with three replicas.
Config ReplicatedBus() {
  Config config;
  config.Set("bus", FreshBusName());
  config.Set("replicas", "3");
  return config;
}

std::string StreamOf(const Config& config) {
  return absl::StrCat("KEEL_", config.GetString("bus", ""));
}

TEST(JetStreamClusterTest, OfFiftyRacingConditionalAppendsExactlyOneIsAccepted) {
  constexpr int kDaemons = 50;
  constexpr int kRounds = 4;
  const Config config = ReplicatedBus();
  std::vector<std::unique_ptr<EventBus>> daemons;
  for (int i = 0; i < kDaemons; ++i) {
    ASSERT_OK_AND_ASSIGN(auto daemon, OpenDaemon(config));
    daemons.push_back(std::move(daemon));
  }
  std::vector<std::string> winners;
  for (uint64_t round = 0; round < kRounds; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    std::latch start(kDaemons);
    std::atomic<int> accepted{0};
    std::atomic<int> conflicts{0};
    Mutex mu;
    std::vector<std::string> errors;
    std::string winner;
    std::vector<std::thread> threads;
    for (int i = 0; i < kDaemons; ++i) {
      threads.emplace_back([&, i] {
        Event event = Payload("contended", absl::StrCat("daemon ", i));
        start.arrive_and_wait();
        absl::StatusOr<Receipt> receipt =
            daemons[i]->Publish(event, {.expected_last_sequence = round});
        MutexLock lock(&mu);
        if (receipt.ok()) {
          ++accepted;
          winner = receipt->id;
        } else if (GetErrorKind(receipt.status()) == ErrorKind::kConflict) {
          ++conflicts;
        } else {
          errors.push_back(receipt.status().ToString());
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    EXPECT_THAT(errors, IsEmpty());
    EXPECT_EQ(accepted.load(), 1);
    EXPECT_EQ(conflicts.load(), kDaemons - 1);
    winners.push_back(winner);
  }
  ASSERT_OK_AND_ASSIGN(std::vector<Event> stored, ReadAll(*daemons[0], "contended"));
  ASSERT_EQ(stored.size(), static_cast<size_t>(kRounds));
  for (size_t i = 0; i < stored.size(); ++i) {
    EXPECT_EQ(stored[i].sequence, i + 1);
    EXPECT_EQ(stored[i].id, winners[i]) << "the stored event is not the one acknowledged";
  }
}

// A daemon whose only server dies misses the records republished until it
// is back, the last of them not even as a gap before a later one. Its
// follower must get them anyway, in order.
TEST(JetStreamClusterTest, AFollowerOfADaemonThatLostItsServerMissesNothing) {
  NatsCluster& cluster = *SharedCluster();
  Config config = ReplicatedBus();
  ASSERT_OK_AND_ASSIGN(auto writer, OpenDaemon(config));
  ASSERT_OK_AND_ASSIGN(int leader, cluster.LeaderOf(StreamOf(config)));
  const int lost = (leader + 1) % cluster.size();
  config.Set("servers", cluster.url(lost));
  ASSERT_OK_AND_ASSIGN(auto reader, OpenDaemon(config));
  ASSERT_OK_AND_ASSIGN(auto follower, reader->Follow("feed", Position::Latest()));
  ASSERT_OK(follower->Poll(10).status());  // Live from here.

  for (int i = 0; i < 10; ++i) ASSERT_OK(writer->Publish(Payload("feed", "before")).status());
  cluster.Kill(lost);
  for (int i = 0; i < 20; ++i) ASSERT_OK(writer->Publish(Payload("feed", "while away")).status());
  ASSERT_OK(cluster.Restart(lost));
  ASSERT_OK(cluster.WaitReady());

  std::vector<uint64_t> sequences;
  const absl::Time deadline = absl::Now() + absl::Minutes(1);
  while (sequences.size() < 30 && absl::Now() < deadline) {
    absl::StatusOr<std::vector<EventPtr>> events = follower->Next(100, absl::Seconds(1));
    ASSERT_OK(events.status());
    for (const EventPtr& event : *events) sequences.push_back(event->sequence);
  }
  std::vector<uint64_t> expected;
  for (uint64_t i = 1; i <= 30; ++i) expected.push_back(i);
  EXPECT_EQ(sequences, expected);
}

// What publishers were told, by event id.
struct Outcomes {
  Mutex mu;
  std::map<std::string, uint64_t> acknowledged ABSL_GUARDED_BY(mu);  // id -> sequence
  std::set<std::string> failed ABSL_GUARDED_BY(mu);
  // Failed and said so: these must never be stored (the rest of `failed`
  // were answered "outcome unknown").
  std::set<std::string> not_stored ABSL_GUARDED_BY(mu);
  std::vector<std::string> unexpected ABSL_GUARDED_BY(mu);
};

// Checks the stream against what its publishers were told: sequences 1..N
// with no gap, every acknowledged event exactly once at its sequence, no
// event twice, and nothing nobody published.
void ExpectAcknowledgedEventsOnceInOrder(EventBus& bus, const std::string& stream,
                                         Outcomes& outcomes) {
  ASSERT_OK_AND_ASSIGN(std::vector<Event> stored, ReadAll(bus, stream));
  MutexLock lock(&outcomes.mu);
  std::set<std::string> seen;
  for (size_t i = 0; i < stored.size(); ++i) {
    EXPECT_EQ(stored[i].sequence, i + 1) << "a gap in the stored sequences";
    EXPECT_TRUE(seen.insert(stored[i].id).second) << "event " << stored[i].id << " stored twice";
    if (!outcomes.acknowledged.count(stored[i].id) && !outcomes.failed.count(stored[i].id)) {
      ADD_FAILURE() << "stored event " << stored[i].id << " was never published";
    }
    EXPECT_EQ(outcomes.not_stored.count(stored[i].id), 0u)
        << "event " << stored[i].id << " is stored though its publisher was told it was not";
  }
  std::map<std::string, uint64_t> at;
  for (const Event& event : stored) at[event.id] = event.sequence;
  for (const auto& [id, sequence] : outcomes.acknowledged) {
    auto it = at.find(id);
    if (it == at.end()) {
      ADD_FAILURE() << "acknowledged event " << id << " (sequence " << sequence << ") is lost";
    } else {
      EXPECT_EQ(it->second, sequence) << "acknowledged event " << id << " moved";
    }
  }
  EXPECT_THAT(outcomes.unexpected, IsEmpty());
}

void Publish(EventBus& bus, const std::string& stream, const std::string& id, Outcomes& outcomes) {
  Event event = Payload(stream, id);
  event.id = id;
  absl::StatusOr<Receipt> receipt = bus.Publish(event);
  MutexLock lock(&outcomes.mu);
  if (receipt.ok()) {
    outcomes.acknowledged[id] = receipt->sequence;
  } else if (GetErrorKind(receipt.status()) == ErrorKind::kUnavailable) {
    outcomes.failed.insert(id);
    if (!IsOutcomeUnknown(receipt.status())) outcomes.not_stored.insert(id);
  } else {
    outcomes.failed.insert(id);
    outcomes.unexpected.push_back(receipt.status().ToString());
  }
}

TEST(JetStreamClusterTest, AcknowledgedEventsSurviveKillingTheStreamLeader) {
  NatsCluster& cluster = *SharedCluster();
  const Config config = ReplicatedBus();
  ASSERT_OK_AND_ASSIGN(auto a, OpenDaemon(config));
  ASSERT_OK_AND_ASSIGN(auto b, OpenDaemon(config));
  Outcomes outcomes;
  std::atomic<bool> stop{false};
  std::vector<std::thread> publishers;
  for (int p = 0; p < 4; ++p) {
    EventBus* bus = p % 2 == 0 ? a.get() : b.get();
    publishers.emplace_back([&, bus, p] {
      for (int i = 0; !stop.load(); ++i) {
        Publish(*bus, "payments", absl::StrCat("p", p, "-", i), outcomes);
      }
    });
  }
  absl::SleepFor(absl::Milliseconds(500));
  ASSERT_OK_AND_ASSIGN(int leader, cluster.LeaderOf(StreamOf(config)));
  cluster.Kill(leader);
  absl::SleepFor(absl::Seconds(2));
  ASSERT_OK(cluster.Restart(leader));
  ASSERT_OK(cluster.WaitReady());
  // Publishing goes on until the stream has a leader again and a little past.
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  size_t before = 0;
  {
    MutexLock lock(&outcomes.mu);
    before = outcomes.acknowledged.size();
  }
  while (absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(200));
    MutexLock lock(&outcomes.mu);
    if (outcomes.acknowledged.size() > before + 50) break;
  }
  stop.store(true);
  for (std::thread& publisher : publishers) publisher.join();

  ASSERT_OK_AND_ASSIGN(auto reader, OpenDaemon(config));
  ExpectAcknowledgedEventsOnceInOrder(*reader, "payments", outcomes);
  MutexLock lock(&outcomes.mu);
  EXPECT_GT(outcomes.acknowledged.size(), before + 50) << "publishing did not resume";
}

// Publishers of one daemon keep many claims in flight at once on its one
// connection, one per stream: through a killed stream leader every stream
// stays 1..N, each acknowledged event once at its sequence, and every
// publish that was not acknowledged is resolved (not stored, or said to be
// unknown).
TEST(JetStreamClusterTest, ManyPublishersOfOneDaemonAcrossStreamsSurviveKillingTheStreamLeader) {
  NatsCluster& cluster = *SharedCluster();
  const Config config = ReplicatedBus();
  ASSERT_OK_AND_ASSIGN(auto bus, OpenDaemon(config));
  constexpr int kStreams = 8;
  constexpr int kPublishers = 24;
  std::vector<Outcomes> outcomes(kStreams);
  auto acknowledged = [&] {
    size_t total = 0;
    for (Outcomes& stream : outcomes) {
      MutexLock lock(&stream.mu);
      total += stream.acknowledged.size();
    }
    return total;
  };
  std::atomic<bool> stop{false};
  std::vector<std::thread> publishers;
  for (int p = 0; p < kPublishers; ++p) {
    publishers.emplace_back([&, p] {
      for (int i = 0; !stop.load(); ++i) {
        const int stream = (p + i) % kStreams;
        Publish(*bus, absl::StrCat("ledger-", stream), absl::StrCat("p", p, "-", i),
                outcomes[stream]);
      }
    });
  }
  absl::SleepFor(absl::Milliseconds(500));
  ASSERT_OK_AND_ASSIGN(int leader, cluster.LeaderOf(StreamOf(config)));
  cluster.Kill(leader);
  absl::SleepFor(absl::Seconds(2));
  ASSERT_OK(cluster.Restart(leader));
  ASSERT_OK(cluster.WaitReady());
  const size_t before = acknowledged();
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (absl::Now() < deadline && acknowledged() <= before + 200) {
    absl::SleepFor(absl::Milliseconds(200));
  }
  stop.store(true);
  for (std::thread& publisher : publishers) publisher.join();

  ASSERT_OK_AND_ASSIGN(auto reader, OpenDaemon(config));
  for (int stream = 0; stream < kStreams; ++stream) {
    SCOPED_TRACE(absl::StrCat("stream ledger-", stream));
    ExpectAcknowledgedEventsOnceInOrder(*reader, absl::StrCat("ledger-", stream), outcomes[stream]);
  }
  EXPECT_GT(acknowledged(), before + 200) << "publishing did not resume";
}

TEST(JetStreamClusterTest, WithoutQuorumPublishesAreUnavailableAndRecoveryLosesNothing) {
  NatsCluster& cluster = *SharedCluster();
  Config config = ReplicatedBus();
  config.Set("request_timeout", "1s");
  config.Set("publish_timeout", "3s");
  config.Set("resolve_timeout", "5s");
  ASSERT_OK_AND_ASSIGN(auto bus, OpenDaemon(config));
  Outcomes outcomes;
  for (int i = 0; i < 20; ++i) Publish(*bus, "orders", absl::StrCat("before-", i), outcomes);
  {
    MutexLock lock(&outcomes.mu);
    ASSERT_EQ(outcomes.acknowledged.size(), 20u);
  }

  cluster.Kill(1);
  cluster.Kill(2);
  // Refused as unavailable (Publish files anything else as unexpected).
  for (int i = 0; i < 3; ++i) Publish(*bus, "orders", absl::StrCat("during-", i), outcomes);
  {
    MutexLock lock(&outcomes.mu);
    EXPECT_EQ(outcomes.failed.size(), 3u);
  }
  EXPECT_NE(bus->DegradedReason(), "");

  ASSERT_OK(cluster.Restart(1));
  ASSERT_OK(cluster.Restart(2));
  ASSERT_OK(cluster.WaitReady());
  // Publishing resumes once the stream has a leader again.
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  bool resumed = false;
  for (int i = 0; absl::Now() < deadline && !resumed; ++i) {
    Publish(*bus, "orders", absl::StrCat("after-", i), outcomes);
    MutexLock lock(&outcomes.mu);
    resumed = outcomes.acknowledged.count(absl::StrCat("after-", i)) > 0;
  }
  ASSERT_TRUE(resumed) << "publishing did not resume after the cluster recovered";
  EXPECT_EQ(bus->DegradedReason(), "");
  ExpectAcknowledgedEventsOnceInOrder(*bus, "orders", outcomes);
}

}  // namespace
}  // namespace keel::jetstream::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new keel::jetstream::testing::JetStreamEnvironment(3));
  return RUN_ALL_TESTS();
}
