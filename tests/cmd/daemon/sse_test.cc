// SSE delivery guarantees over loopback: Last-Event-ID resume while
// publishers keep going, slow clients, and FollowStream across a restart.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "keel/cmd/keel/client/errors.h"
#include "keel/cmd/keel/client/follow.h"
#include "keel/core/forwarding_bus.h"
#include "keel/core/logger.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// Publishes `count` events to `stream` from its own thread and connection.
class Publisher {
 public:
  Publisher(uint16_t port, std::string stream, int count)
      : thread_([this, port, stream = std::move(stream), count] {
          client::HttpClient http("127.0.0.1", port);
          for (int i = 0; i < count; ++i) {
            absl::StatusOr<PublishedEvent> event = Publish(http, stream, "bg", absl::StrCat(i));
            if (!event.ok()) {
              status_ = event.status();
              return;
            }
            published_.fetch_add(1);
          }
        }) {}
  ~Publisher() { Join().IgnoreError(); }
  absl::Status Join() {
    if (thread_.joinable()) thread_.join();
    return status_;
  }
  int published() const { return published_.load(); }

 private:
  absl::Status status_;
  std::atomic<int> published_{0};
  std::thread thread_;
};

class SseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(daemon_.Start());
    http_ = daemon_.NewClient();
  }
  InProcessDaemon daemon_;
  std::unique_ptr<client::HttpClient> http_;
};

TEST_F(SseTest, ReconnectWithLastEventIdGetsExactlyTheRestWhilePublishersKeepGoing) {
  for (int i = 0; i < 100; ++i) ASSERT_OK(Publish(*http_, "resume", "t", absl::StrCat(i)).status());
  client::SseOptions options;
  options.stream = "resume";
  options.after = "earliest";
  std::string last_id;
  {
    ASSERT_OK_AND_ASSIGN(auto reader, daemon_.OpenSse(options));
    ASSERT_OK_AND_ASSIGN(auto frames, ReadEvents(*reader, 40));
    EXPECT_THAT(SequencesOf(frames), ElementsAreArray(Range(1, 40)));
    last_id = *frames.back().id;
    EXPECT_EQ(reader->last_event_id(), last_id);
  }  // Disconnects; the server may have sent more than we read.

  Publisher publisher(daemon_.port(), "resume", 400);
  // Reconnect while the publisher is (most likely) still running.
  const absl::Time deadline = absl::Now() + kWait;
  while (publisher.published() < 50 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  options.last_event_id = last_id;
  options.after = "latest";  // Last-Event-ID takes precedence.
  ASSERT_OK_AND_ASSIGN(auto reader, daemon_.OpenSse(options));
  ASSERT_OK_AND_ASSIGN(auto rest, ReadEvents(*reader, 460));
  ASSERT_OK(publisher.Join());
  EXPECT_THAT(SequencesOf(rest), ElementsAreArray(Range(41, 500)));
  for (const auto& frame : rest) {
    EXPECT_EQ(frame.id, std::string(FrameJson(frame).at("cursor").as_string()));
  }
  absl::StatusOr<std::vector<client::SseFrame>> extra =
      ReadEvents(*reader, 1, absl::Milliseconds(500));
  EXPECT_THAT(extra, keel::testing::StatusIs(absl::StatusCode::kDeadlineExceeded))
      << "a duplicate or an event nobody published";
}

// The fixture's daemon sends keepalives after 200 ms without a write: an idle
// connection keeps getting them, one at a time, so proxies see it alive.
TEST_F(SseTest, IdleConnectionGetsKeepalivesAtTheInterval) {
  client::SseOptions options;
  options.stream = "quiet";
  ASSERT_OK_AND_ASSIGN(auto reader, daemon_.OpenSse(options));
  int keepalives = 0;
  const absl::Time end = absl::Now() + absl::Seconds(10);
  while (keepalives < 3 && absl::Now() < end) {
    absl::StatusOr<client::SseFrame> frame = reader->Next(end - absl::Now());
    if (!frame.ok()) break;
    EXPECT_FALSE(frame->IsEvent()) << "nobody published";
    for (const std::string& comment : frame->comments) keepalives += comment == "keepalive";
  }
  EXPECT_EQ(keepalives, 3) << "an idle connection stopped getting keepalives";
}

// Without Last-Event-ID or ?after= a reader starts at the head: it gets
// the events published after it connected, none of the stream's past.
TEST_F(SseTest, WithoutAPositionAReaderStartsAtTheHead) {
  for (int i = 0; i < 3; ++i) ASSERT_OK(Publish(*http_, "history", "t", absl::StrCat(i)).status());
  client::SseOptions options;
  options.stream = "history";
  ASSERT_OK_AND_ASSIGN(auto reader, daemon_.OpenSse(options));
  ASSERT_OK_AND_ASSIGN(PublishedEvent live, Publish(*http_, "history", "t", "3"));
  ASSERT_OK_AND_ASSIGN(auto frames, ReadEvents(*reader, 1));
  EXPECT_EQ(FrameSequence(frames[0]), live.sequence);
  EXPECT_EQ(live.sequence, 4u);
}

// A tenant-filtered reader whose tenant is idle still gets its Last-Event-ID
// moved past the other tenants' events (id-only frames, no event), so it
// reconnects from there: exactly the later events of its tenant.
TEST_F(SseTest, FilteredReaderLastEventIdFollowsTheStreamWhileItsTenantIsIdle) {
  client::SseOptions options;
  options.stream = "tenants";
  options.tenant = "a";
  ASSERT_OK_AND_ASSIGN(auto reader, daemon_.OpenSse(options));
  std::string last_cursor;
  for (int i = 0; i < 5; ++i) {
    ASSERT_OK_AND_ASSIGN(PublishedEvent event, Publish(*http_, "tenants", "t", "{}", "b"));
    last_cursor = event.cursor;
  }
  const absl::Time end = absl::Now() + absl::Seconds(10);
  while (reader->last_event_id() != last_cursor && absl::Now() < end) {
    absl::StatusOr<client::SseFrame> frame = reader->Next(end - absl::Now());
    ASSERT_OK(frame.status());
    EXPECT_FALSE(frame->IsEvent()) << "an event of another tenant: " << frame->data;
  }
  ASSERT_EQ(reader->last_event_id(), last_cursor) << "the watermark did not reach the head";

  options.last_event_id = reader->last_event_id();
  reader.reset();
  ASSERT_OK(Publish(*http_, "tenants", "t", "{}", "b").status());
  ASSERT_OK_AND_ASSIGN(PublishedEvent mine, Publish(*http_, "tenants", "t", "{}", "a"));
  ASSERT_OK_AND_ASSIGN(auto resumed, daemon_.OpenSse(options));
  ASSERT_OK_AND_ASSIGN(auto frames, ReadEvents(*resumed, 1));
  EXPECT_EQ(FrameSequence(frames[0]), mine.sequence);
}

TEST_F(SseTest, ManyConcurrentReadersEachSeeEveryEventOnce) {
  constexpr int kReaders = 8;
  constexpr int kEvents = 300;
  std::vector<std::unique_ptr<client::SseReader>> readers;
  for (int i = 0; i < kReaders; ++i) {
    client::SseOptions options;
    options.stream = "fan";
    ASSERT_OK_AND_ASSIGN(auto reader, daemon_.OpenSse(options));
    readers.push_back(std::move(reader));
  }
  Publisher a(daemon_.port(), "fan", kEvents / 2);
  Publisher b(daemon_.port(), "fan", kEvents / 2);
  ASSERT_OK(a.Join());
  ASSERT_OK(b.Join());
  for (auto& reader : readers) {
    ASSERT_OK_AND_ASSIGN(auto frames, ReadEvents(*reader, kEvents));
    EXPECT_THAT(SequencesOf(frames), ElementsAreArray(Range(1, kEvents)));
  }
}

TEST_F(SseTest, SlowClientEventuallyReceivesEveryEventInOrder) {
  constexpr int kEvents = 20'000;
  constexpr int kBatch = 1000;
  client::SseOptions options;
  options.stream = "slow";
  ASSERT_OK_AND_ASSIGN(auto reader, daemon_.OpenSse(options));
  // Publish everything while the client reads nothing: far more than the
  // subscription queue (256) and the socket buffers hold.
  std::string padding(200, 'p');
  for (int batch = 0; batch < kEvents / kBatch; ++batch) {
    json::array events;
    for (int i = 0; i < kBatch; ++i) {
      events.push_back(json::object{
          {"type", "bulk"}, {"data", json::object{{"n", batch * kBatch + i}, {"pad", padding}}}});
    }
    ASSERT_OK_AND_ASSIGN(auto response, PostEvents(*http_, "slow", json::serialize(events)));
    ASSERT_EQ(response.status, 201) << response.body;
  }
  absl::SleepFor(absl::Milliseconds(500));  // Let the server hit the full socket.
  // What the daemon holds for the client that reads nothing is bounded: a
  // write in flight and at most one batch behind it (--sse-batch: 256
  // events, each frame about 510 bytes here), not the ~10 MB published.
  ASSERT_OK_AND_ASSIGN(auto stalled, http_->Get("/metrics"));
  EXPECT_GT(MetricValue(stalled.body, "keel_sse_unsent_bytes"), 0);
  EXPECT_LT(MetricValue(stalled.body, "keel_sse_unsent_bytes"), 2 * 256 * 600);
  ASSERT_OK_AND_ASSIGN(auto frames, ReadEvents(*reader, kEvents));
  std::vector<uint64_t> sequences = SequencesOf(frames);
  ASSERT_EQ(sequences.size(), static_cast<size_t>(kEvents));
  EXPECT_EQ(sequences, Range(1, kEvents));
  for (int i = 0; i < kEvents; i += 997) {
    EXPECT_EQ(FrameJson(frames[i]).at("data").at("n").to_number<int>(), i);
  }
  // The slow client was served from the store, not from an unbounded queue.
  ASSERT_OK_AND_ASSIGN(auto metrics, http_->Get("/metrics"));
  EXPECT_THAT(metrics.body, HasSubstr("\nkeel_sse_delivered_events_total 20000\n"));
  EXPECT_GT(MetricValue(metrics.body, "keel_sse_catch_up_reads_total"), 0)
      << "no catch-up counted for a client 20k events behind a 256-event queue";
  // Once the client has read everything, the daemon holds nothing for it.
  double unsent = -1;
  for (int i = 0; i < 200 && unsent != 0; ++i) {
    ASSERT_OK_AND_ASSIGN(auto now, http_->Get("/metrics"));
    unsent = MetricValue(now.body, "keel_sse_unsent_bytes");
    if (unsent != 0) absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(unsent, 0);
}

// A client that goes away while the daemon holds frames for it (a write in
// flight to a full socket) takes them with it: keel_sse_unsent_bytes
// returns to 0.
TEST_F(SseTest, AClientThatLeavesMidWriteLeavesNothingHeld) {
  client::SseOptions options;
  options.stream = "gone";
  ASSERT_OK_AND_ASSIGN(auto reader, daemon_.OpenSse(options));
  json::array events;
  for (int i = 0; i < 1000; ++i) {
    events.push_back(json::object{{"type", "bulk"}, {"data", std::string(1000, 'p')}});
  }
  for (int batch = 0; batch < 20; ++batch) {  // ~24 MB: more than socket buffers hold.
    ASSERT_OK_AND_ASSIGN(auto response, PostEvents(*http_, "gone", json::serialize(events)));
    ASSERT_EQ(response.status, 201) << response.body;
  }
  absl::SleepFor(absl::Milliseconds(300));  // Let the server hit the full socket.
  ASSERT_OK_AND_ASSIGN(auto stalled, http_->Get("/metrics"));
  ASSERT_GT(MetricValue(stalled.body, "keel_sse_unsent_bytes"), 0);
  reader.reset();
  double unsent = -1, open = -1;
  for (int i = 0; i < 300 && (unsent != 0 || open != 0); ++i) {
    ASSERT_OK_AND_ASSIGN(auto now, http_->Get("/metrics"));
    unsent = MetricValue(now.body, "keel_sse_unsent_bytes");
    open = MetricValue(now.body, "keel_sse_connections");
    if (unsent != 0 || open != 0) absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(open, 0);
  EXPECT_EQ(unsent, 0);
}

// Reads `count` live events one at a time, pausing now and then, so that
// the daemon puts several events into each write.
std::vector<uint64_t> ReadSlowly(client::SseReader& reader, int count) {
  std::vector<uint64_t> sequences;
  while (sequences.size() < static_cast<size_t>(count)) {
    absl::StatusOr<std::vector<client::SseFrame>> frames = ReadEvents(reader, 1);
    if (!frames.ok()) {
      ADD_FAILURE() << frames.status();
      break;
    }
    sequences.push_back(FrameSequence(frames->front()));
    if (sequences.size() % 50 == 0) absl::SleepFor(absl::Milliseconds(30));
  }
  return sequences;
}

// Live events are written in batches (one write per --sse-flush interval);
// a client that reads slowly still gets each event once, in order.
void ExpectSlowLiveReaderGetsEveryEventOnce(absl::Duration sse_flush) {
  constexpr int kEvents = 600;
  DaemonOptions options;
  options.server.sse_flush = sse_flush;
  InProcessDaemon daemon(options);
  ASSERT_OK(daemon.Start());
  client::SseOptions sse;
  sse.stream = "batched";
  ASSERT_OK_AND_ASSIGN(auto reader, daemon.OpenSse(sse));
  Publisher a(daemon.port(), "batched", kEvents / 2);
  Publisher b(daemon.port(), "batched", kEvents / 2);
  EXPECT_EQ(ReadSlowly(*reader, kEvents), Range(1, kEvents));
  ASSERT_OK(a.Join());
  ASSERT_OK(b.Join());
  EXPECT_THAT(ReadEvents(*reader, 1, absl::Milliseconds(300)),
              keel::testing::StatusIs(absl::StatusCode::kDeadlineExceeded))
      << "a duplicate or an event nobody published";
}

TEST(SseBatchingTest, SlowLiveReaderGetsEveryEventOnceInOrder) {
  ExpectSlowLiveReaderGetsEveryEventOnce(absl::Milliseconds(100));
}

TEST(SseBatchingTest, SlowLiveReaderGetsEveryEventOnceInOrderWithoutFlushInterval) {
  ExpectSlowLiveReaderGetsEveryEventOnce(absl::ZeroDuration());
}

TEST_F(SseTest, FollowStreamResumesAcrossADaemonRestart) {
  std::vector<uint64_t> sequences;
  std::vector<std::string> types;
  std::atomic<int> received{0};
  std::atomic<int> reconnects{0};
  absl::Notification following;
  absl::Status result;
  std::thread follower([&] {
    client::FollowOptions options;
    options.stream = "follow";
    options.after = "earliest";
    options.max_retries = 50;
    options.max_backoff = absl::Milliseconds(500);
    options.on_reconnect = [&](const absl::Status&, absl::Duration, int) {
      reconnects.fetch_add(1);
    };
    result = client::FollowStream("127.0.0.1", daemon_.port(), options,
                                  [&](const client::SseFrame& frame) {
                                    if (!following.HasBeenNotified()) following.Notify();
                                    sequences.push_back(FrameSequence(frame));
                                    types.push_back(frame.event);
                                    return received.fetch_add(1) + 1 < 100;
                                  });
  });
  for (int i = 0; i < 50; ++i)
    ASSERT_OK(Publish(*http_, "follow", "before", absl::StrCat(i)).status());
  ASSERT_TRUE(following.WaitForNotificationWithTimeout(kWait));
  const absl::Time deadline = absl::Now() + kWait;
  while (received.load() < 50 && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(5));
  ASSERT_EQ(received.load(), 50);

  http_.reset();
  ASSERT_OK(daemon_.Restart());  // Same data directory and port.
  http_ = daemon_.NewClient();
  for (int i = 0; i < 50; ++i)
    ASSERT_OK(Publish(*http_, "follow", "after", absl::StrCat(i)).status());
  follower.join();
  EXPECT_OK(result);
  EXPECT_EQ(sequences, Range(1, 100));
  EXPECT_GE(reconnects.load(), 1);
  ASSERT_EQ(types.size(), 100u);
  EXPECT_EQ(types[49], "before");
  EXPECT_EQ(types[50], "after");
}

TEST_F(SseTest, FollowStreamFromLatestMissesNothingPublishedWhileReconnecting) {
  // The head is resolved to a cursor first, so events published while the
  // follower is disconnected before its first event are not skipped.
  ASSERT_OK(Publish(*http_, "late", "old", "0").status());
  std::vector<uint64_t> sequences;
  absl::Status result;
  std::thread follower([&] {
    client::FollowOptions options;
    options.stream = "late";
    options.max_retries = 50;
    options.max_backoff = absl::Milliseconds(500);
    result = client::FollowStream("127.0.0.1", daemon_.port(), options,
                                  [&](const client::SseFrame& frame) {
                                    sequences.push_back(FrameSequence(frame));
                                    return sequences.size() < 3;
                                  });
  });
  // Wait until the follower's SSE connection is open (its start is resolved).
  const absl::Time deadline = absl::Now() + kWait;
  while (daemon_.metrics().Render().find("\nkeel_sse_connections 1\n") == std::string::npos &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  ASSERT_LT(absl::Now(), deadline) << "the follower never connected";
  http_.reset();
  ASSERT_OK(daemon_.Restart());
  http_ = daemon_.NewClient();
  for (int i = 0; i < 3; ++i) ASSERT_OK(Publish(*http_, "late", "new", absl::StrCat(i)).status());
  follower.join();
  EXPECT_OK(result);
  EXPECT_EQ(sequences, Range(2, 4));
}

TEST_F(SseTest, FollowStreamReturnsClientErrorsAtOnce) {
  ASSERT_OK(Publish(*http_, "a", "t", "1").status());
  ASSERT_OK_AND_ASSIGN(PublishedEvent other, Publish(*http_, "b", "t", "1"));
  client::FollowOptions options;
  options.stream = "a";
  options.last_event_id = other.cursor;
  int reconnects = 0;
  options.on_reconnect = [&](const absl::Status&, absl::Duration, int) { ++reconnects; };
  absl::Status status = client::FollowStream("127.0.0.1", daemon_.port(), options,
                                             [](const client::SseFrame&) { return true; });
  ASSERT_TRUE(client::GetHttpError(status).has_value()) << status;
  EXPECT_EQ(client::GetHttpError(status)->code, "cursor_mismatch");
  EXPECT_EQ(reconnects, 0);
}

TEST(FollowStreamTest, GivesUpAfterBoundedRetriesWhenNobodyListens) {
  // A port nobody listens on: bind, read the port, close.
  uint16_t port = 0;
  {
    InProcessDaemon daemon;
    ASSERT_OK(daemon.Start());
    port = daemon.port();
  }
  client::FollowOptions options;
  options.stream = "x";
  options.after = "earliest";
  options.max_retries = 3;
  options.default_retry = absl::Milliseconds(10);
  std::vector<absl::Duration> waits;
  options.on_reconnect = [&](const absl::Status& reason, absl::Duration wait, int attempt) {
    EXPECT_EQ(attempt, static_cast<int>(waits.size()) + 1);
    waits.push_back(wait);
  };
  absl::Status status = client::FollowStream("127.0.0.1", port, options,
                                             [](const client::SseFrame&) { return true; });
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("gave up after 3"));
  // Exponential backoff from the retry advice.
  EXPECT_THAT(waits, ElementsAreArray(
                         {absl::Milliseconds(10), absl::Milliseconds(20), absl::Milliseconds(40)}));
}

// A subscription that hands out `budget` events and then fails, as a store
// that lost a disk mid-stream would.
class FailingSubscription : public Subscription {
 public:
  FailingSubscription(std::unique_ptr<Subscription> inner, size_t budget)
      : inner_(std::move(inner)), budget_(budget) {}
  absl::StatusOr<std::vector<EventPtr>> Poll(size_t max) override {
    if (budget_ == 0) return absl::DataLossError("the disk went away");
    absl::StatusOr<std::vector<EventPtr>> events = inner_->Poll(std::min(max, budget_));
    if (events.ok()) budget_ -= events->size();
    return events;
  }
  absl::StatusOr<std::vector<EventPtr>> Next(size_t max, absl::Duration timeout) override {
    return Poll(max);
  }
  void SetWakeup(std::function<void()> wakeup) override { inner_->SetWakeup(std::move(wakeup)); }
  void Cancel() override { inner_->Cancel(); }
  Cursor position() const override { return inner_->position(); }
  uint64_t catch_up_reads() const override { return inner_->catch_up_reads(); }

 private:
  const std::unique_ptr<Subscription> inner_;
  size_t budget_;
};

class FailingSubscriptionsBus : public ForwardingBus {
 public:
  using ForwardingBus::ForwardingBus;
  absl::StatusOr<std::unique_ptr<Subscription>> Subscribe(
      const SubscribeOptions& options) override {
    absl::StatusOr<std::unique_ptr<Subscription>> inner = ForwardingBus::Subscribe(options);
    if (!inner.ok()) return inner;
    return std::make_unique<FailingSubscription>(*std::move(inner), 3);
  }
};

// A stream that fails mid-way ends with a keel.error frame after the events
// it delivered, then the connection closes; the daemon logs it once at warn.
TEST(SseFailureTest, AFailedSubscriptionEndsWithAnErrorFrameAndAWarning) {
  auto log = std::make_shared<CapturingLogger>();
  DaemonOptions options;
  options.driver = "memory";
  options.logger = log;
  options.wrap_bus = [](std::unique_ptr<EventBus> bus) -> std::unique_ptr<EventBus> {
    return std::make_unique<FailingSubscriptionsBus>(std::move(bus));
  };
  InProcessDaemon daemon(options);
  ASSERT_OK(daemon.Start());
  std::unique_ptr<client::HttpClient> http = daemon.NewClient();
  for (int i = 0; i < 5; ++i) ASSERT_OK(Publish(*http, "s", "t", absl::StrCat(i)).status());
  client::SseOptions sse;
  sse.stream = "s";
  sse.after = "earliest";
  ASSERT_OK_AND_ASSIGN(auto reader, daemon.OpenSse(sse));
  ASSERT_OK_AND_ASSIGN(auto frames, ReadEvents(*reader, 4));
  EXPECT_EQ(SequencesOf({frames.begin(), frames.begin() + 3}), Range(1, 3));
  EXPECT_EQ(frames[3].event, "keel.error");
  EXPECT_THAT(frames[3].data, HasSubstr("the disk went away"));
  absl::StatusOr<client::SseFrame> after = reader->Next(kWait);
  EXPECT_FALSE(after.ok() && after->IsEvent()) << "the stream went on after its error";
  int warnings = 0;
  for (const CapturingLogger::Line& line : log->lines()) {
    warnings += line.level == LogLevel::kWarn &&
                absl::StrContains(line.message, "sse stream=s ended with an error: DATA_LOSS");
  }
  EXPECT_EQ(warnings, 1);
}

}  // namespace
}  // namespace keel::daemon_test
