// Several daemons on one bus: each test opens the same bus more than once
// (each instance with its own NATS connection, as separate `keel daemon`
// processes would) on one standalone nats-server, and checks what a user
// of one daemon sees of what happened on another.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"
#include "keel/drivers/jetstream/nats_client.h"
#include "keel/tests/conformance/helpers.h"
#include "keel/tests/jetstream/jetstream_environment.h"
#include "keel/tests/jetstream/jetstream_test_util.h"
#include "keel/tests/testing/status_matchers.h"
#include "keel/tests/testing/temp_dir.h"
#include "keel/tests/testing/test_certificates.h"

namespace keel::jetstream::testing {
namespace {

using ::keel::conformance::Range;
using ::keel::testing::HasErrorKind;
using ::keel::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Config BusNamed(const std::string& bus) {
  Config config;
  config.Set("bus", bus);
  return config;
}

// Reads `subscription` until it delivered `count` events or a minute
// passed; the sequences, in arrival order.
std::vector<uint64_t> ReadSequences(Subscription& subscription, size_t count) {
  std::vector<uint64_t> sequences;
  const absl::Time deadline = absl::Now() + absl::Minutes(1);
  while (sequences.size() < count && absl::Now() < deadline) {
    absl::StatusOr<std::vector<EventPtr>> events = subscription.Next(100, absl::Seconds(1));
    if (!events.ok()) break;
    for (const EventPtr& event : *events) sequences.push_back(event->sequence);
  }
  return sequences;
}

TEST(JetStreamDaemonsTest, EventsPublishedOnEveryDaemonReachEachDaemonsFollowersInOrder) {
  const Config config = BusNamed(FreshBusName());
  ASSERT_OK_AND_ASSIGN(auto a, OpenDaemon(config));
  ASSERT_OK_AND_ASSIGN(auto b, OpenDaemon(config));
  ASSERT_OK_AND_ASSIGN(auto on_a, a->Follow("orders", Position::Latest()));
  ASSERT_OK_AND_ASSIGN(auto on_b, b->Follow("orders", Position::Latest()));
  // A first poll makes a follower from `latest` live.
  ASSERT_OK(on_a->Poll(10).status());
  ASSERT_OK(on_b->Poll(10).status());

  constexpr int kEach = 60;
  std::vector<std::thread> publishers;
  for (EventBus* bus : {a.get(), a.get(), b.get()}) {
    publishers.emplace_back([bus] {
      for (int i = 0; i < kEach; ++i) EXPECT_OK(bus->Publish(Payload("orders", "x")).status());
    });
  }
  for (std::thread& publisher : publishers) publisher.join();

  EXPECT_EQ(ReadSequences(*on_b, 3 * kEach), Range(1, 3 * kEach));
  EXPECT_EQ(ReadSequences(*on_a, 3 * kEach), Range(1, 3 * kEach));
}

TEST(JetStreamDaemonsTest, AnIdempotencyKeyIsHonouredByEveryDaemon) {
  const Config config = BusNamed(FreshBusName());
  ASSERT_OK_AND_ASSIGN(auto a, OpenDaemon(config));
  ASSERT_OK_AND_ASSIGN(auto b, OpenDaemon(config));
  ASSERT_OK(b->Publish(Payload("pay", "before")).status());  // b has read the stream once.
  Event first = Payload("pay", "charge");
  first.idempotency_key = "charge-42";
  ASSERT_OK_AND_ASSIGN(Receipt original, a->Publish(first));

  Event retry = Payload("pay", "charge again");
  retry.idempotency_key = "charge-42";
  ASSERT_OK_AND_ASSIGN(Receipt again, b->Publish(retry));
  EXPECT_TRUE(again.duplicate);
  EXPECT_EQ(again.sequence, original.sequence);
  EXPECT_EQ(again.id, original.id);

  // A daemon that starts later knows the key too.
  ASSERT_OK_AND_ASSIGN(auto c, OpenDaemon(config));
  ASSERT_OK_AND_ASSIGN(Receipt late, c->Publish(retry));
  EXPECT_TRUE(late.duplicate);
  EXPECT_EQ(late.sequence, original.sequence);
  ASSERT_OK_AND_ASSIGN(std::vector<Event> stored, ReadAll(*c, "pay"));
  EXPECT_EQ(stored.size(), 2u);
}

TEST(JetStreamDaemonsTest, ExpectedLastSequenceCountsEveryDaemonsAppends) {
  const Config config = BusNamed(FreshBusName());
  ASSERT_OK_AND_ASSIGN(auto a, OpenDaemon(config));
  ASSERT_OK_AND_ASSIGN(auto b, OpenDaemon(config));
  ASSERT_OK(b->Publish(Payload("occ", "1")).status());
  ASSERT_OK(a->Publish(Payload("occ", "2")).status());
  ASSERT_OK(a->Publish(Payload("occ", "3")).status());

  // b last appended at 1; its conditional publish must see 2 and 3.
  absl::StatusOr<Receipt> stale = b->Publish(Payload("occ", "x"), {.expected_last_sequence = 1});
  EXPECT_THAT(stale.status(), HasErrorKind(ErrorKind::kConflict));
  std::optional<ConflictInfo> conflict = GetConflict(stale.status());
  ASSERT_TRUE(conflict.has_value());
  EXPECT_EQ(conflict->actual, 3u);
  ASSERT_OK_AND_ASSIGN(Receipt current,
                       b->Publish(Payload("occ", "4"), {.expected_last_sequence = 3}));
  EXPECT_EQ(current.sequence, 4u);
}

// Publishes that queue at one daemon share a record; each must still be
// answered as if alone: one key, one event; one expectation, one winner.
TEST(JetStreamDaemonsTest, PublishesGroupedIntoOneRecordAreAnsweredOneByOne) {
  ASSERT_OK_AND_ASSIGN(auto daemon, OpenDaemon(BusNamed(FreshBusName())));
  constexpr int kThreads = 16;
  std::vector<absl::StatusOr<Receipt>> keyed(kThreads), conditional(kThreads);
  // A large batch keeps the keyed stream's writer busy while the racing
  // publishes queue behind it, so that they meet in a record (whatever
  // goes first, the answers below hold).
  std::vector<Event> slow;
  for (int i = 0; i < 30; ++i) slow.push_back(Payload("", std::string(100 << 10, 's')));
  std::latch started(1);
  std::thread busy([&] {
    started.count_down();
    EXPECT_OK(daemon->PublishBatch("keyed", slow).status());
  });
  started.wait();
  absl::SleepFor(absl::Milliseconds(2));
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      Event event = Payload("keyed", absl::StrCat("attempt ", i));
      event.idempotency_key = "the-one";
      keyed[i] = daemon->Publish(event);
    });
    threads.emplace_back([&, i] {
      conditional[i] = daemon->Publish(Payload("cas", "x"), {.expected_last_sequence = 0});
    });
  }
  for (std::thread& thread : threads) thread.join();
  busy.join();
  int originals = 0, accepted = 0;
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_OK(keyed[i].status());
    EXPECT_EQ(keyed[i]->sequence, keyed[0]->sequence);
    EXPECT_EQ(keyed[i]->id, keyed[0]->id);
    if (!keyed[i]->duplicate) ++originals;
    if (conditional[i].ok()) {
      ++accepted;
    } else {
      EXPECT_THAT(conditional[i].status(), HasErrorKind(ErrorKind::kConflict));
    }
  }
  EXPECT_EQ(originals, 1);
  EXPECT_EQ(accepted, 1);
  ASSERT_OK_AND_ASSIGN(std::vector<Event> stored, ReadAll(*daemon, "keyed"));
  EXPECT_EQ(stored.size(), 31u);
  ASSERT_OK_AND_ASSIGN(stored, ReadAll(*daemon, "cas"));
  EXPECT_EQ(stored.size(), 1u);
}

TEST(JetStreamDaemonsTest, ABatchLargerThanTheServersMaxPayloadIsTooLargeAndStoresNothing) {
  ASSERT_OK_AND_ASSIGN(auto daemon, OpenDaemon(BusNamed(FreshBusName())));
  std::vector<Event> batch;
  for (int i = 0; i < 80; ++i) batch.push_back(Payload("big", std::string(120 << 10, 'x')));
  absl::StatusOr<std::vector<Receipt>> refused = daemon->PublishBatch("big", batch);
  EXPECT_THAT(refused.status(), HasErrorKind(ErrorKind::kPayloadTooLarge));
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("max_payload"));
  ASSERT_OK_AND_ASSIGN(Receipt next, daemon->Publish(Payload("big", "small")));
  EXPECT_EQ(next.sequence, 1u);
}

TEST(JetStreamDaemonsTest, DeclarationsAreSharedAndADifferentOneIsDriftOnAnyDaemon) {
  const Config config = BusNamed(FreshBusName());
  ASSERT_OK_AND_ASSIGN(auto early, OpenDaemon(config));  // Opened before the declaration.
  ASSERT_OK_AND_ASSIGN(auto a, OpenDaemon(config));
  ASSERT_OK_AND_ASSIGN(StreamPolicy declared, StreamPolicy::Parse("max_events=10"));
  ASSERT_OK(a->Declare("orders", declared));

  ASSERT_OK_AND_ASSIGN(auto later, OpenDaemon(config));
  ASSERT_OK_AND_ASSIGN(StreamPolicy seen, later->PolicyOf("orders"));
  EXPECT_EQ(seen, declared);
  ASSERT_OK_AND_ASSIGN(StreamPolicy other, StreamPolicy::Parse("max_events=20"));
  EXPECT_THAT(later->Declare("orders", other), HasErrorKind(ErrorKind::kResourceDrift));
  // The daemon that read the declarations before a's must not overwrite it.
  EXPECT_THAT(early->Declare("orders", other), HasErrorKind(ErrorKind::kResourceDrift));
  ASSERT_OK_AND_ASSIGN(auto last, OpenDaemon(config));
  ASSERT_OK_AND_ASSIGN(StreamPolicy kept, last->PolicyOf("orders"));
  EXPECT_EQ(kept, declared);
}

TEST(JetStreamDaemonsTest, ARunningDaemonAppliesAnotherDaemonsDeclarationWithoutARestart) {
  const Config config = BusNamed(FreshBusName());
  ASSERT_OK_AND_ASSIGN(auto running, OpenDaemon(config));
  ASSERT_OK_AND_ASSIGN(auto other, OpenDaemon(config));
  ASSERT_OK_AND_ASSIGN(StreamPolicy declared, StreamPolicy::Parse("max_events=3"));
  ASSERT_OK(other->Declare("orders", declared));

  // The running daemon learns it from the bus, not from its own Declare.
  StreamPolicy seen;
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < deadline) {
    ASSERT_OK_AND_ASSIGN(seen, running->PolicyOf("orders"));
    if (seen == declared) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_EQ(seen, declared) << "the running daemon never applied the declaration";
  // ...and enforces it: its trims keep the newest 3 events.
  for (int i = 0; i < 5; ++i) ASSERT_OK(running->Publish(Payload("orders", "e")).status());
  ASSERT_OK(running->Trim(1000).status());
  ASSERT_OK_AND_ASSIGN(StreamInfo info, running->replayer()->Bounds("orders"));
  EXPECT_EQ(info.first_sequence, 3u);
  EXPECT_EQ(info.count, 3u);
  // Declaring the same policy there too is a no-op, not drift.
  EXPECT_OK(running->Declare("orders", declared));
}

TEST(JetStreamDaemonsTest, ALeaseGrantedOnOneDaemonFencesACommitOnAnother) {
  ManualClock clock;
  const Config config = BusNamed(FreshBusName());
  ASSERT_OK_AND_ASSIGN(auto a, OpenDaemon(config, &clock));
  ASSERT_OK_AND_ASSIGN(auto b, OpenDaemon(config, &clock));
  for (int i = 0; i < 10; ++i) ASSERT_OK(a->Publish(Payload("jobs", "j")).status());
  const ConsumeRequest request{"jobs", "workers", 100, absl::Minutes(1),
                               ConsumeRequest::Start::kEarliest};

  ASSERT_OK_AND_ASSIGN(ConsumePage on_a, a->groups()->Consume(request));
  ASSERT_EQ(on_a.events.size(), 10u);
  ASSERT_OK_AND_ASSIGN(ConsumePage busy, b->groups()->Consume(request));
  EXPECT_TRUE(busy.busy_until.has_value()) << "b granted a second live lease";

  clock.Advance(absl::Minutes(2));  // a's lease expires; b takes the work over.
  ASSERT_OK_AND_ASSIGN(ConsumePage on_b, b->groups()->Consume(request));
  ASSERT_EQ(on_b.events.size(), 10u);
  EXPECT_GT(on_b.lease.token, on_a.lease.token);
  EXPECT_THAT(a->groups()->Commit("jobs", "workers", on_a.lease.to, on_a.lease.token),
              HasErrorKind(ErrorKind::kConflict));
  ASSERT_OK(b->groups()->Commit("jobs", "workers", on_b.lease.to, on_b.lease.token));
  ASSERT_OK_AND_ASSIGN(GroupInfo seen_from_a, a->groups()->Describe("jobs", "workers"));
  EXPECT_EQ(seen_from_a.cursor.sequence, 10u);
  EXPECT_EQ(seen_from_a.lag, 0u);
}

TEST(JetStreamDaemonsTest, CursorsOfARecreatedStreamOrOfAnotherBusMismatch) {
  const std::string bus = FreshBusName();
  ASSERT_OK_AND_ASSIGN(auto first, OpenDaemon(BusNamed(bus)));
  std::vector<Receipt> receipts;
  for (int i = 0; i < 5; ++i) {
    ASSERT_OK_AND_ASSIGN(Receipt receipt, first->Publish(Payload("s", "old")));
    receipts.push_back(receipt);
  }
  ReplayRequest request;
  request.stream = "s";
  request.after = Position::After(receipts[1].cursor);

  ASSERT_OK_AND_ASSIGN(auto other_bus, OpenDaemon(BusNamed(FreshBusName())));
  for (int i = 0; i < 5; ++i) ASSERT_OK(other_bus->Publish(Payload("s", "other")).status());
  EXPECT_THAT(other_bus->replayer()->Replay(request), HasErrorKind(ErrorKind::kCursorMismatch));

  ASSERT_OK(first->Close());
  first.reset();
  ASSERT_OK_AND_ASSIGN(
      std::string deleted,
      ApiRequest(SharedCluster()->servers(), absl::StrCat("$JS.API.STREAM.DELETE.KEEL_", bus), ""));
  ASSERT_THAT(deleted, HasSubstr("\"success\":true"));
  ASSERT_OK_AND_ASSIGN(auto recreated, OpenDaemon(BusNamed(bus)));
  for (int i = 0; i < 5; ++i) ASSERT_OK(recreated->Publish(Payload("s", "new")).status());
  EXPECT_THAT(recreated->replayer()->Replay(request), HasErrorKind(ErrorKind::kCursorMismatch));
  EXPECT_THAT(recreated->Follow("s", request.after), HasErrorKind(ErrorKind::kCursorMismatch));
}

TEST(JetStreamDaemonsTest, ARecordWrittenAroundKeelMakesReadsFailLoudly) {
  const std::string bus = FreshBusName();
  ASSERT_OK_AND_ASSIGN(auto daemon, OpenDaemon(BusNamed(bus)));
  for (int i = 0; i < 5; ++i) ASSERT_OK(daemon->Publish(Payload("ledger", "e")).status());

  // A record claiming sequence 3 again, published without Keel's guards.
  NatsClientOptions options;
  options.servers = {SharedCluster()->url(0)};
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<NatsClient> raw, NatsClient::Connect(options));
  const NatsHeaders forged = {{"Keel-Seq", "3"},
                              {"Keel-Count", "1"},
                              {"Keel-Bytes", "100"},
                              {"Keel-First", "1"},
                              {"Keel-First-Bytes", "0"}};
  NatsReply reply =
      raw->Request(absl::StrCat("keel.", bus, ".s.ledger"), forged, "", absl::Seconds(5));
  ASSERT_EQ(reply.kind, NatsReply::Kind::kReplied) << reply.problem;
  ASSERT_THAT(reply.data, HasSubstr("\"seq\""));

  // Reading to the head meets the events the forged head hides.
  absl::StatusOr<std::vector<Event>> read = ReadAll(*daemon, "ledger");
  EXPECT_THAT(read.status(), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(std::string(read.status().message()), HasSubstr("conditional publish"));
  ASSERT_OK_AND_ASSIGN(auto fresh, OpenDaemon(BusNamed(bus)));
  EXPECT_THAT(ReadAll(*fresh, "ledger"), StatusIs(absl::StatusCode::kDataLoss));
  // Neither a daemon that knew the stream nor one that reads it anew
  // appends after the forged record.
  absl::StatusOr<Receipt> appended = daemon->Publish(Payload("ledger", "after"));
  EXPECT_THAT(appended.status(), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(std::string(appended.status().message()), HasSubstr("starts at 3"));
  appended = fresh->Publish(Payload("ledger", "after"));
  EXPECT_THAT(appended.status(), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(std::string(appended.status().message()), HasSubstr("not written by Keel"));
}

TEST(JetStreamDaemonsTest, ServersAloneAreEnoughToOpenTheDefaultBus) {
  Config config;
  config.Set("servers", SharedCluster()->servers());
  ASSERT_OK_AND_ASSIGN(auto bus, OpenDaemon(config));
  ASSERT_OK_AND_ASSIGN(Receipt receipt, bus->Publish(Payload("hello", "world")));
  ASSERT_OK_AND_ASSIGN(std::vector<Event> stored, ReadAll(*bus, "hello"));
  ASSERT_FALSE(stored.empty());
  EXPECT_EQ(stored.back().sequence, receipt.sequence);
  EXPECT_EQ(bus->DegradedReason(), "");
}

TEST(JetStreamDaemonsTest, BadOptionsAreRefusedByName) {
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"bus", "has.dot"},
                                                        {"replicas", "0"},
                                                        {"publish_timeout", "5m"},
                                                        {"request_timeout", "soon"},
                                                        {"servers", ","}}) {
    SCOPED_TRACE(key);
    Config config;
    config.Set("servers", SharedCluster()->servers());
    config.Set(key, value);
    absl::StatusOr<std::unique_ptr<EventBus>> bus = OpenDaemon(config);
    EXPECT_THAT(bus.status(), HasErrorKind(ErrorKind::kInvalidArgument));
    EXPECT_THAT(std::string(bus.status().message()), HasSubstr(key));
  }
}

TEST(JetStreamDaemonsTest, AStreamOfTheBussNameLaidOutOtherwiseIsRefused) {
  const std::string bus = FreshBusName();
  ASSERT_OK_AND_ASSIGN(
      std::string created,
      ApiRequest(SharedCluster()->servers(), absl::StrCat("$JS.API.STREAM.CREATE.KEEL_", bus),
                 absl::StrCat(R"({"name":"KEEL_)", bus, R"(","subjects":["elsewhere.)", bus,
                              R"(.>"],"storage":"memory","num_replicas":1})")));
  ASSERT_THAT(created, ::testing::Not(HasSubstr("\"error\"")));
  absl::StatusOr<std::unique_ptr<EventBus>> opened = OpenDaemon(BusNamed(bus));
  EXPECT_THAT(opened.status(), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(std::string(opened.status().message()), HasSubstr("not laid out for Keel"));
}

TEST(JetStreamDaemonsTest, ThousandsOfKeelStreamsShareOneJetStreamStream) {
  const std::string bus = FreshBusName();
  ASSERT_OK_AND_ASSIGN(auto daemon, OpenDaemon(BusNamed(bus)));
  ASSERT_OK_AND_ASSIGN(std::string before,
                       ApiRequest(SharedCluster()->servers(), "$JS.API.STREAM.NAMES", ""));
  constexpr int kStreams = 1000;
  for (int i = 0; i < kStreams; ++i) {
    ASSERT_OK(daemon->Publish(Payload(absl::StrCat("tenant.", 10000 + i), "e")).status());
  }
  ASSERT_OK_AND_ASSIGN(std::string after,
                       ApiRequest(SharedCluster()->servers(), "$JS.API.STREAM.NAMES", ""));
  EXPECT_EQ(after, before) << "publishing to new Keel streams created JetStream streams";
  ASSERT_OK_AND_ASSIGN(std::vector<StreamInfo> listed,
                       daemon->replayer()->ListStreams("tenant.", 2 * kStreams));
  ASSERT_EQ(listed.size(), static_cast<size_t>(kStreams));
  EXPECT_EQ(listed.front().stream, "tenant.10000");
  EXPECT_EQ(listed.back().stream, absl::StrCat("tenant.", 10000 + kStreams - 1));
  for (const StreamInfo& info : listed) EXPECT_EQ(info.last_sequence, 1u);
}

TEST(JetStreamDaemonsTest, ATokenServerNeedsTheTokenOption) {
  ::keel::testing::TempDir dir;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<NatsCluster> guarded,
                       NatsCluster::Start(1, dir.Sub("nats"), {.token = "a-token-for-keel"}));
  Config config = BusNamed(FreshBusName());
  config.Set("servers", guarded->servers());
  EXPECT_THAT(OpenDaemon(config).status(), HasErrorKind(ErrorKind::kUnavailable));
  config.Set("token", "a-token-for-keel");
  ASSERT_OK_AND_ASSIGN(auto daemon, OpenDaemon(config));
  ASSERT_OK_AND_ASSIGN(Receipt receipt, daemon->Publish(Payload("s", "with token")));
  EXPECT_EQ(receipt.sequence, 1u);
}

TEST(JetStreamDaemonsTest, ATlsServerIsReachedWithItsCaAndRefusedWithout) {
  ::keel::testing::TempDir dir;
  ASSERT_OK_AND_ASSIGN(::keel::testing::TestCertificates certificates,
                       ::keel::testing::MakeTestCertificates(dir.path().string()));
  const NatsAccess access{.tls_cert = certificates.server_cert,
                          .tls_key = certificates.server_key,
                          .tls_ca = certificates.ca};
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<NatsCluster> secured,
                       NatsCluster::Start(1, dir.Sub("nats"), access));
  Config config = BusNamed(FreshBusName());
  config.Set("servers", secured->servers());
  config.Set("connect_timeout", "2s");
  // Without the CA the driver does not speak TLS, and the server wants it.
  EXPECT_THAT(OpenDaemon(config).status(), HasErrorKind(ErrorKind::kUnavailable));
  config.Set("tls_ca", access.tls_ca);
  ASSERT_OK_AND_ASSIGN(auto daemon, OpenDaemon(config));
  ASSERT_OK_AND_ASSIGN(Receipt receipt, daemon->Publish(Payload("s", "over tls")));
  EXPECT_EQ(receipt.sequence, 1u);
  ASSERT_OK_AND_ASSIGN(std::vector<Event> stored, ReadAll(*daemon, "s"));
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].payload, "over tls");
}

TEST(JetStreamDaemonsTest, NoServerIsUnavailable) {
  Config config;
  config.Set("servers", "nats://127.0.0.1:1");
  config.Set("connect_timeout", "500ms");
  EXPECT_THAT(OpenDaemon(config).status(), HasErrorKind(ErrorKind::kUnavailable));
}

}  // namespace
}  // namespace keel::jetstream::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new keel::jetstream::testing::JetStreamEnvironment(1));
  return RUN_ALL_TESTS();
}
