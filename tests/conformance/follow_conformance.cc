// Follow: a subscription from a past position replays and then joins live
// with nothing lost and nothing repeated across the seam, including while
// publishers keep running.
#include <gmock/gmock.h>

#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"
#include "keel/tests/conformance/conformance.h"
#include "keel/tests/conformance/helpers.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::conformance {

void LinkFollowTests() {}

namespace {

using ::keel::testing::HasErrorKind;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Publishes from several threads until told to stop (or a cap is reached)
// so that a follower can join while the stream is moving.
class BackgroundPublishers {
 public:
  BackgroundPublishers(EventBus& bus, std::string stream, int threads, int cap_per_thread) {
    for (int t = 0; t < threads; ++t) {
      threads_.emplace_back([this, &bus, stream, t, cap_per_thread] {
        for (int i = 0; i < cap_per_thread && !stop_.load(); ++i) {
          absl::Status status =
              bus.Publish(MakeEvent(stream, "test.live", absl::StrCat(t, "-", i))).status();
          if (!status.ok()) {
            failures_.fetch_add(1);
            break;
          }
        }
        finished_.fetch_add(1);
      });
    }
  }
  ~BackgroundPublishers() { Stop(); }

  bool all_finished() const { return finished_.load() == static_cast<int>(threads_.size()); }
  int failures() const { return failures_.load(); }
  void Stop() {
    stop_.store(true);
    for (std::thread& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
  }

 private:
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  std::atomic<int> finished_{0};
  std::atomic<int> failures_{0};
};

// Waits (bounded) until `stream`'s head reaches `sequence` or `publishers`
// finished.
void AwaitHead(Replayer& replayer, absl::string_view stream, uint64_t sequence,
               const BackgroundPublishers& publishers) {
  const absl::Time end = absl::Now() + kWait;
  while (absl::Now() < end && !publishers.all_finished()) {
    absl::StatusOr<StreamInfo> info = replayer.Bounds(stream);
    if (info.ok() && info->last_sequence >= sequence) return;
    absl::SleepFor(absl::Milliseconds(1));
  }
}

// Follows `stream` from `options.after` (set by the caller, relative to 100
// pre-published events) while four threads publish, then checks that the
// follower saw exactly every event after its start, in order.
void ExpectExactSeam(EventBus& bus, SubscribeOptions options, uint64_t start_after) {
  const std::string stream = options.stream;
  ASSERT_OK(PublishN(bus, stream, 100, "pre"));
  BackgroundPublishers publishers(bus, stream, /*threads=*/4, /*cap_per_thread=*/500);
  AwaitHead(*bus.replayer(), stream, 150, publishers);

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Subscription> follower, bus.Subscribe(options));
  // Read while publishing continues, so the follower crosses replay -> live
  // (and, with a small queue, live -> catch-up -> live) under load.
  std::vector<EventPtr> received;
  const absl::Time end = absl::Now() + kLongWait;
  while (received.size() < 400 && !publishers.all_finished() && absl::Now() < end) {
    ASSERT_OK_AND_ASSIGN(std::vector<EventPtr> batch, follower->Next(64, kWait));
    received.insert(received.end(), batch.begin(), batch.end());
  }
  publishers.Stop();
  ASSERT_EQ(publishers.failures(), 0);
  ASSERT_OK_AND_ASSIGN(StreamInfo info, bus.replayer()->Bounds(stream));

  // Only when something is left: ReadThrough on a follower that has already
  // delivered the last event would wait kWait for nothing.
  if (received.empty() || received.back()->sequence < info.last_sequence) {
    ReadResult rest = ReadThrough(*follower, info.last_sequence);
    ASSERT_OK(rest.status);
    received.insert(received.end(), rest.all.begin(), rest.all.end());
  }
  EXPECT_EQ(Sequences(received), Range(start_after + 1, info.last_sequence))
      << "the follower must see every later event exactly once, in order";
}

SubscribeOptions FollowOptions(absl::string_view stream, Position after) {
  SubscribeOptions options;
  options.stream = std::string(stream);
  options.after = after;
  return options;
}

TEST_P(FollowConformanceTest, FromCursorGetsExactlyLaterEventsThenLive) {
  ASSERT_OK_AND_ASSIGN(std::vector<Receipt> receipts, PublishN(bus(), "f", 10));
  ASSERT_OK_AND_ASSIGN(auto follower, bus().Follow("f", Position::After(receipts[3].cursor)));
  ReadResult history = ReadThrough(*follower, 10);
  ASSERT_OK(history.status);
  ASSERT_EQ(Sequences(history.all), Range(5, 10));
  EXPECT_EQ(history.all.front()->payload, "e-4");

  ASSERT_OK(PublishN(bus(), "f", 3, "live"));
  ReadResult live = ReadThrough(*follower, 13);
  ASSERT_OK(live.status);
  EXPECT_EQ(Sequences(live.all), Range(11, 13));
  EXPECT_EQ(follower->position().sequence, 13u);
}

TEST_P(FollowConformanceTest, FromLatestGetsOnlyNewEvents) {
  ASSERT_OK(PublishN(bus(), "f", 5));
  ASSERT_OK_AND_ASSIGN(auto follower, bus().Follow("f", Position::Latest()));
  ASSERT_OK(PublishN(bus(), "f", 3, "new"));
  ReadResult result = ReadThrough(*follower, 8);
  ASSERT_OK(result.status);
  EXPECT_EQ(Sequences(result.all), Range(6, 8));
}

TEST_P(FollowConformanceTest, FromEarliestGetsHistoryThenLive) {
  ASSERT_OK(PublishN(bus(), "f", 4));
  ASSERT_OK_AND_ASSIGN(auto follower, bus().Follow("f", Position::Earliest()));
  ASSERT_OK(PublishN(bus(), "f", 2, "new"));
  ReadResult result = ReadThrough(*follower, 6);
  ASSERT_OK(result.status);
  EXPECT_EQ(Sequences(result.all), Range(1, 6));
}

TEST_P(FollowConformanceTest, FromEarliestOfUnwrittenStreamGetsLiveEvents) {
  ASSERT_OK_AND_ASSIGN(auto follower, bus().Follow("fresh", Position::Earliest()));
  ASSERT_OK(PublishN(bus(), "fresh", 3));
  ReadResult result = ReadThrough(*follower, 3);
  ASSERT_OK(result.status);
  EXPECT_EQ(Sequences(result.all), Range(1, 3));
}

TEST_P(FollowConformanceTest, IdleFollowerReturnsNothingRatherThanBlockingForever) {
  ASSERT_OK_AND_ASSIGN(auto follower, bus().Follow("quiet", Position::Latest()));
  ASSERT_OK_AND_ASSIGN(std::vector<EventPtr> events, follower->Next(10, absl::Milliseconds(20)));
  EXPECT_THAT(events, IsEmpty());
  ASSERT_OK_AND_ASSIGN(events, follower->Poll(10));
  EXPECT_THAT(events, IsEmpty());
}

TEST_P(FollowConformanceTest, OnlyEventsOfTheFollowedStreamArrive) {
  ASSERT_OK_AND_ASSIGN(auto follower, bus().Follow("wanted", Position::Latest()));
  ASSERT_OK(PublishN(bus(), "other", 3));
  ASSERT_OK(PublishN(bus(), "wanted", 2));
  ReadResult result = ReadThrough(*follower, 2);
  ASSERT_OK(result.status);
  ASSERT_EQ(Sequences(result.all), Range(1, 2));
  for (const EventPtr& event : result.all) EXPECT_EQ(event->stream, "wanted");
}

TEST_P(FollowConformanceTest, EverySubscriberGetsEveryEvent) {
  ASSERT_OK_AND_ASSIGN(auto first, bus().Follow("shared", Position::Latest()));
  ASSERT_OK_AND_ASSIGN(auto second, bus().Follow("shared", Position::Latest()));
  ASSERT_OK(PublishN(bus(), "shared", 5));
  for (Subscription* follower : {first.get(), second.get()}) {
    ReadResult result = ReadThrough(*follower, 5);
    ASSERT_OK(result.status);
    EXPECT_EQ(Sequences(result.all), Range(1, 5));
  }
}

TEST_P(FollowConformanceTest, FilterAppliesToHistoryAndLive) {
  auto publish = [&](const std::string& tenant) {
    Event event = MakeEvent("tenanted");
    event.tenant = tenant;
    return bus().Publish(event).status();
  };
  for (const char* tenant : {"acme", "globex", "acme"}) ASSERT_OK(publish(tenant));
  SubscribeOptions options = FollowOptions("tenanted", Position::Earliest());
  options.filter.tenant = "acme";
  ASSERT_OK_AND_ASSIGN(auto follower, bus().Subscribe(options));
  for (const char* tenant : {"globex", "acme", "globex"}) ASSERT_OK(publish(tenant));

  ReadResult result = ReadThrough(*follower, 5);
  ASSERT_OK(result.status);
  EXPECT_THAT(Sequences(result.all), ElementsAre(1, 3, 5));
  // Publish one more so that a follower which wrongly delivered 6 would show it.
  ASSERT_OK(publish("acme"));
  ReadResult more = ReadThrough(*follower, 7);
  ASSERT_OK(more.status);
  EXPECT_THAT(Sequences(more.all), ElementsAre(7));
}

TEST_P(FollowConformanceTest, SeamIsExactFromMiddleCursorWhilePublishing) {
  // Start after sequence 50 of the 100 pre-published events.
  SubscribeOptions options = FollowOptions("seam", Position::Earliest());
  options.after = Position::After(Cursor::For("seam", epoch(), 50));
  ExpectExactSeam(bus(), options, 50);
}

TEST_P(FollowConformanceTest, SeamIsExactFromEarliestWhilePublishing) {
  ExpectExactSeam(bus(), FollowOptions("seam", Position::Earliest()), 0);
}

TEST_P(FollowConformanceTest, SeamIsExactWithTinyQueueAndPagesWhilePublishing) {
  // A queue of 4 and pages of 8 force many live <-> catch-up switches.
  SubscribeOptions options = FollowOptions("seam", Position::Earliest());
  options.after = Position::After(Cursor::For("seam", epoch(), 30));
  options.queue_capacity = 4;
  options.catch_up_page = 8;
  ExpectExactSeam(bus(), options, 30);
}

// A stream with many followers is fanned out off the publishing thread
// (core/fanout.h): still every event, once, in order, for each of them,
// while two publishers keep writing.
TEST_P(FollowConformanceTest, ManyFollowersEachGetEveryEventOnceInOrder) {
  constexpr int kFollowers = 64;
  constexpr int kPerPublisher = 100;
  ASSERT_OK(PublishN(bus(), "crowd", 10));
  std::vector<std::unique_ptr<Subscription>> followers;
  for (int i = 0; i < kFollowers; ++i) {
    ASSERT_OK_AND_ASSIGN(auto follower, bus().Follow("crowd", Position::Earliest()));
    followers.push_back(std::move(follower));
  }
  std::vector<std::thread> publishers;
  for (int p = 0; p < 2; ++p) {
    publishers.emplace_back([this] { EXPECT_OK(PublishN(bus(), "crowd", kPerPublisher)); });
  }
  for (auto& publisher : publishers) publisher.join();
  for (auto& follower : followers) {
    ReadResult result = ReadThrough(*follower, 10 + 2 * kPerPublisher);
    ASSERT_OK(result.status);
    EXPECT_EQ(Sequences(result.all), Range(1, 10 + 2 * kPerPublisher));
  }
}

TEST_P(FollowConformanceTest, CloseDrainsEveryLiveSubscriberOfACrowdedStream) {
  std::vector<std::unique_ptr<Subscription>> subscribers;
  SubscribeOptions options;
  options.stream = "crowd";
  for (int i = 0; i < 64; ++i) {
    ASSERT_OK_AND_ASSIGN(auto subscriber, SubscribeLive(bus(), options));
    subscribers.push_back(std::move(subscriber));
  }
  ASSERT_OK(PublishN(bus(), "crowd", 5));
  ASSERT_OK(bus().Close());
  for (auto& subscriber : subscribers) {
    ReadResult rest = ReadToError(*subscriber);
    EXPECT_EQ(Sequences(rest.events), Range(1, 5)) << "queued or handed off: none lost on Close";
    EXPECT_THAT(rest.status, HasErrorKind(ErrorKind::kClosed));
  }
}

}  // namespace
}  // namespace keel::conformance
