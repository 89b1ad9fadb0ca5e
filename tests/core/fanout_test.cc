// FanOut and subscriptions, driven directly with a tiny in-test Replayer so
// each behaviour of core/subscription.h is pinned down without a driver:
// live delivery, wakeups, overflow policies and their notices (under a
// ManualClock), filters and position(), catch-up, holes, retention gaps and
// closing.
#include "keel/core/fanout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "keel/core/clock.h"
#include "keel/core/errors.h"
#include "keel/core/mutex.h"
#include "keel/core/status_macros.h"
#include "keel/core/subscription.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel {
namespace {

using ::keel::testing::HasErrorKind;
using ::keel::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr uint64_t kEpoch = 77;

// Stores events per stream; can evict a prefix to simulate retention.
class FakeReplayer : public Replayer {
 public:
  // Appends `count` events of `tenant` and returns them for Deliver().
  std::vector<EventPtr> Append(const std::string& stream, int count,
                               const std::string& tenant = "") {
    std::lock_guard<std::mutex> lock(mu_);
    Log& log = logs_[stream];
    std::vector<EventPtr> added;
    for (int i = 0; i < count; ++i) {
      auto event = std::make_shared<Event>();
      event->stream = stream;
      event->type = "test.event";
      event->tenant = tenant;
      event->sequence = log.first + log.events.size();
      log.events.push_back(event);
      added.push_back(event);
    }
    return added;
  }

  // Forgets events below `first`.
  void Evict(const std::string& stream, uint64_t first) {
    std::lock_guard<std::mutex> lock(mu_);
    Log& log = logs_[stream];
    while (log.first < first && !log.events.empty()) {
      log.events.pop_front();
      ++log.first;
    }
  }

  absl::StatusOr<ReplayPage> Replay(const ReplayRequest& request) override {
    KEEL_RETURN_IF_ERROR(ValidateReplayRequest(request));
    std::lock_guard<std::mutex> lock(mu_);
    const Log& log = logs_[request.stream];
    StreamInfo info = InfoLocked(request.stream, log);
    KEEL_ASSIGN_OR_RETURN(uint64_t after, ResolvePosition(request.after, info, kEpoch));
    KEEL_ASSIGN_OR_RETURN(uint64_t end, ResolveUntil(request, info, kEpoch));
    ReplayPage page;
    page.head_sequence = info.last_sequence;
    uint64_t scanned = after;
    for (uint64_t seq = after + 1; seq <= end && page.events.size() < request.limit; ++seq) {
      scanned = seq;
      const Event& event = *log.events[seq - log.first];
      if (request.filter.Matches(event)) page.events.push_back(event);
    }
    page.next = Cursor::For(request.stream, kEpoch, scanned);
    page.reached_end = scanned >= end;
    return page;
  }

  absl::StatusOr<StreamInfo> Bounds(absl::string_view stream) override {
    std::lock_guard<std::mutex> lock(mu_);
    return InfoLocked(stream, logs_[std::string(stream)]);
  }

  absl::StatusOr<std::vector<StreamInfo>> ListStreams(absl::string_view, size_t) override {
    return std::vector<StreamInfo>{};
  }

  uint64_t epoch() const override { return kEpoch; }

 private:
  struct Log {
    uint64_t first = 1;
    std::deque<EventPtr> events;
  };

  static StreamInfo InfoLocked(absl::string_view stream, const Log& log) {
    StreamInfo info;
    info.stream = std::string(stream);
    info.first_sequence = log.first;
    info.last_sequence = log.first + log.events.size() - 1;
    info.count = log.events.size();
    info.head = Cursor::For(stream, kEpoch, info.last_sequence);
    return info;
  }

  std::mutex mu_;  // std::mutex: visible to ThreadSanitizer (see core/mutex.h).
  absl::flat_hash_map<std::string, Log> logs_;
};

std::vector<uint64_t> Sequences(const std::vector<EventPtr>& events) {
  std::vector<uint64_t> out;
  for (const EventPtr& event : events) out.push_back(event->sequence);
  return out;
}

class FanOutTest : public ::testing::Test {
 protected:
  SubscribeOptions Options(Position after = Position::Latest()) {
    SubscribeOptions options;
    options.stream = "s";
    options.after = after;
    return options;
  }
  std::unique_ptr<Subscription> Subscribe(const SubscribeOptions& options) {
    absl::StatusOr<std::unique_ptr<Subscription>> subscription = fanout_.Subscribe(options);
    EXPECT_THAT(subscription, IsOk());
    return subscription.ok() ? *std::move(subscription) : nullptr;
  }
  // A new subscription reads what its position needs from the Replayer; its
  // first poll that finds nothing makes it live (queue, overflow policy and
  // live wakeups in play). Tests of live behaviour start from there.
  std::unique_ptr<Subscription> SubscribeLive(const SubscribeOptions& options) {
    std::unique_ptr<Subscription> subscription = Subscribe(options);
    if (subscription != nullptr) {
      EXPECT_THAT(PollSequences(*subscription), IsEmpty());
    }
    return subscription;
  }
  // Stores `count` events and delivers them, as a driver does.
  void Publish(int count, const std::string& tenant = "") {
    fanout_.Deliver("s", replayer_.Append("s", count, tenant));
  }
  std::vector<uint64_t> PollSequences(Subscription& subscription, size_t max = 100) {
    absl::StatusOr<std::vector<EventPtr>> events = subscription.Poll(max);
    EXPECT_THAT(events, IsOk());
    return events.ok() ? Sequences(*events) : std::vector<uint64_t>{};
  }

  ManualClock clock_;
  FakeReplayer replayer_;
  FanOut fanout_{&replayer_, &clock_};
};

TEST_F(FanOutTest, LiveSubscriberReceivesDeliveredEventsInOrder) {
  auto subscription = SubscribeLive(Options());
  Publish(3);
  EXPECT_THAT(PollSequences(*subscription), ElementsAre(1, 2, 3));
  EXPECT_THAT(PollSequences(*subscription), IsEmpty());
  Publish(2);
  EXPECT_THAT(PollSequences(*subscription, 1), ElementsAre(4));
  EXPECT_THAT(PollSequences(*subscription, 1), ElementsAre(5));
}

TEST_F(FanOutTest, SubscribersOnlySeeTheirStream) {
  auto subscription = Subscribe(Options());
  fanout_.Deliver("other", replayer_.Append("other", 2));
  EXPECT_THAT(PollSequences(*subscription), IsEmpty());
}

TEST_F(FanOutTest, HasSubscribersTracksLiveSubscriptions) {
  EXPECT_FALSE(fanout_.HasSubscribers("s"));
  auto subscription = Subscribe(Options());
  EXPECT_TRUE(fanout_.HasSubscribers("s"));
  EXPECT_FALSE(fanout_.HasSubscribers("other"));
  subscription->Cancel();
  EXPECT_FALSE(fanout_.HasSubscribers("s"));
}

TEST_F(FanOutTest, SubscribersLeavingInAnyOrderLeaveTheOthersReceivingEverything) {
  std::vector<std::unique_ptr<Subscription>> subscriptions;
  for (int i = 0; i < 4; ++i) subscriptions.push_back(SubscribeLive(Options()));
  subscriptions[0].reset();  // The first and a middle one leave.
  subscriptions[2].reset();
  Publish(2);
  EXPECT_THAT(PollSequences(*subscriptions[1]), ElementsAre(1, 2));
  EXPECT_THAT(PollSequences(*subscriptions[3]), ElementsAre(1, 2));
  subscriptions[3].reset();  // The one that took a leaver's place.
  Publish(1);
  EXPECT_THAT(PollSequences(*subscriptions[1]), ElementsAre(3));
  subscriptions[1].reset();
  EXPECT_FALSE(fanout_.HasSubscribers("s"));
}

// Bug (core/subscription_impl.cc): a subscription starts in catch-up mode and
// only goes live on its first poll; events offered before that are not
// queued and do not call the wakeup, so a reader that sets a wakeup and waits
// for it never hears about them.
TEST_F(FanOutTest, WakeupIsCalledForEventsPublishedRightAfterSubscribe) {
  auto subscription = Subscribe(Options());
  std::atomic<int> wakeups{0};
  subscription->SetWakeup([&] { wakeups.fetch_add(1); });
  Publish(2);
  EXPECT_GE(wakeups.load(), 1) << "Poll would now return events 1-2";
  EXPECT_THAT(PollSequences(*subscription), ElementsAre(1, 2));
}

// By design (rfcs/0001-architecture.md, "Closing"): a subscription that is
// still catching up when the bus closes stops where it got to, and its
// position() says where a later follow resumes; nothing is queued to drain.
TEST_F(FanOutTest, CatchingUpSubscriptionStopsAtItsPositionOnClose) {
  auto subscription = Subscribe(Options());
  Publish(3);  // Not queued: a new subscription reads from the Replayer first.
  fanout_.CloseAll();
  EXPECT_THAT(subscription->Poll(10), HasErrorKind(ErrorKind::kClosed));
  EXPECT_EQ(subscription->position().sequence, 0u);
}

TEST_F(FanOutTest, WakeupIsCalledWhenEventsArrive) {
  auto subscription = SubscribeLive(Options());
  std::atomic<int> wakeups{0};
  subscription->SetWakeup([&] { wakeups.fetch_add(1); });
  Publish(2);
  EXPECT_GE(wakeups.load(), 1);
  EXPECT_THAT(PollSequences(*subscription), ElementsAre(1, 2));
  const int before = wakeups.load();
  fanout_.Deliver("other", replayer_.Append("other", 1));
  EXPECT_EQ(wakeups.load(), before) << "nothing new for this subscription";
  Publish(1);
  EXPECT_GT(wakeups.load(), before);
}

TEST_F(FanOutTest, WakeupIsCalledOnceUntilTheReaderPolls) {
  auto subscription = SubscribeLive(Options());
  std::atomic<int> wakeups{0};
  subscription->SetWakeup([&] { wakeups.fetch_add(1); });
  Publish(1);
  Publish(1);
  Publish(1);
  EXPECT_EQ(wakeups.load(), 1) << "the reader was told and has not polled";
  EXPECT_THAT(PollSequences(*subscription), ElementsAre(1, 2, 3));
  Publish(1);
  EXPECT_EQ(wakeups.load(), 2) << "a poll makes the next event news again";
}

TEST_F(FanOutTest, SetWakeupReplacesAndClears) {
  auto subscription = SubscribeLive(Options());
  std::atomic<int> first{0}, second{0};
  subscription->SetWakeup([&] { first.fetch_add(1); });
  subscription->SetWakeup([&] { second.fetch_add(1); });
  Publish(1);
  EXPECT_EQ(first.load(), 0);
  EXPECT_GE(second.load(), 1);
  subscription->SetWakeup(nullptr);
  const int seen = second.load();
  Publish(1);
  EXPECT_EQ(second.load(), seen);
}

TEST_F(FanOutTest, WakeupIsCalledOnClose) {
  auto subscription = Subscribe(Options());
  std::atomic<int> wakeups{0};
  subscription->SetWakeup([&] { wakeups.fetch_add(1); });
  fanout_.CloseAll();
  EXPECT_GE(wakeups.load(), 1) << "a final status is news for the reader too";
}

TEST_F(FanOutTest, DropOldestNoticeAtMostOncePerWindow) {
  SubscribeOptions options = Options();
  options.queue_capacity = 1;
  options.overflow = OverflowPolicy::kDropOldest;
  options.notice_window = absl::Seconds(1);
  auto subscription = SubscribeLive(options);

  Publish(3);  // Keeps 3, drops 1-2.
  ASSERT_OK_AND_ASSIGN(std::vector<EventPtr> events, subscription->Poll(10));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]->type, kDroppedNoticeType);
  EXPECT_EQ(events[0]->sequence, 0u);
  EXPECT_EQ(events[0]->attributes.at(kNoticeRanges), "1-2");
  EXPECT_EQ(events[0]->attributes.at(kNoticeCount), "2");
  EXPECT_EQ(events[1]->sequence, 3u);

  Publish(3);  // Keeps 6, drops 4-5: inside the window, so no notice yet.
  EXPECT_THAT(PollSequences(*subscription), ElementsAre(6));
  Publish(2);  // Keeps 8, drops 7.
  EXPECT_THAT(PollSequences(*subscription), ElementsAre(8));
  EXPECT_THAT(PollSequences(*subscription), IsEmpty());

  clock_.Advance(absl::Seconds(1));  // One notice covers everything since.
  ASSERT_OK_AND_ASSIGN(events, subscription->Poll(10));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]->type, kDroppedNoticeType);
  EXPECT_EQ(events[0]->attributes.at(kNoticeRanges), "4-5,7-7");
  EXPECT_EQ(events[0]->attributes.at(kNoticeFirst), "4");
  EXPECT_EQ(events[0]->attributes.at(kNoticeLast), "7");
  EXPECT_EQ(events[0]->attributes.at(kNoticeCount), "3");
  EXPECT_THAT(PollSequences(*subscription), IsEmpty());
}

TEST_F(FanOutTest, PositionAdvancesPastFilteredEvents) {
  SubscribeOptions options = Options();
  options.filter.tenant = "acme";
  auto subscription = SubscribeLive(options);
  Publish(3, "globex");
  EXPECT_THAT(PollSequences(*subscription), IsEmpty());
  EXPECT_EQ(subscription->position().sequence, 3u);
  Publish(1, "acme");
  Publish(1, "globex");
  EXPECT_THAT(PollSequences(*subscription), ElementsAre(4));
  EXPECT_EQ(subscription->position().sequence, 5u);
  EXPECT_EQ(subscription->position(), Cursor::For("s", kEpoch, 5));
}

TEST_F(FanOutTest, PositionIsTheLastSequenceHandedOut) {
  auto subscription = SubscribeLive(Options());
  EXPECT_EQ(subscription->position().sequence, 0u);
  Publish(5);
  EXPECT_THAT(PollSequences(*subscription, 2), ElementsAre(1, 2));
  EXPECT_EQ(subscription->position().sequence, 2u) << "3-5 are queued, not handed out";
}

TEST_F(FanOutTest, DisconnectEndsWithSlowConsumerForGood) {
  SubscribeOptions options = Options();
  options.queue_capacity = 2;
  options.overflow = OverflowPolicy::kDisconnect;
  auto subscription = SubscribeLive(options);
  Publish(3);
  EXPECT_THAT(subscription->Poll(10), HasErrorKind(ErrorKind::kSlowConsumer));
  Publish(1);
  EXPECT_THAT(subscription->Poll(10), HasErrorKind(ErrorKind::kSlowConsumer));
}

// Polls until `count` sequences arrived (or 20 polls).
std::vector<uint64_t> PollUntil(Subscription& subscription, size_t count) {
  std::vector<uint64_t> received;
  for (int i = 0; i < 20 && received.size() < count; ++i) {
    absl::StatusOr<std::vector<EventPtr>> events = subscription.Poll(100);
    EXPECT_THAT(events, IsOk());
    if (!events.ok()) break;
    for (uint64_t sequence : Sequences(*events)) received.push_back(sequence);
  }
  return received;
}

std::vector<uint64_t> Range(uint64_t first, uint64_t last) {
  std::vector<uint64_t> range;
  for (uint64_t sequence = first; sequence <= last; ++sequence) range.push_back(sequence);
  return range;
}

TEST_F(FanOutTest, CatchUpPolicyServesOverflowFromTheStreamsTail) {
  SubscribeOptions options = Options();
  options.queue_capacity = 2;
  auto subscription = SubscribeLive(options);
  const uint64_t reads = subscription->catch_up_reads();
  Publish(10);
  EXPECT_EQ(PollUntil(*subscription, 10), Range(1, 10));
  EXPECT_EQ(subscription->catch_up_reads(), reads) << "the tail held everything it missed";
  Publish(1);
  EXPECT_THAT(PollSequences(*subscription), ElementsAre(11)) << "back to live";
}

TEST_F(FanOutTest, TailHandsOutTheDeliveredEventsThemselves) {
  SubscribeOptions options = Options();
  options.queue_capacity = 1;
  auto subscription = SubscribeLive(options);
  std::vector<EventPtr> delivered = replayer_.Append("s", 3);
  fanout_.Deliver("s", delivered);
  ASSERT_OK_AND_ASSIGN(std::vector<EventPtr> queued, subscription->Poll(10));
  ASSERT_OK_AND_ASSIGN(std::vector<EventPtr> caught_up, subscription->Poll(10));
  ASSERT_EQ(queued.size() + caught_up.size(), 3u);
  EXPECT_EQ(caught_up.back().get(), delivered.back().get()) << "shared, not copied";
}

TEST_F(FanOutTest, CatchUpFurtherBehindThanTheTailReadsTheReplayer) {
  FanOutOptions fanout_options;
  fanout_options.tail_events = 3;
  FanOut fanout(&replayer_, &clock_, fanout_options);
  SubscribeOptions options = Options();
  options.queue_capacity = 2;
  ASSERT_OK_AND_ASSIGN(auto subscription, fanout.Subscribe(options));
  EXPECT_THAT(PollSequences(*subscription), IsEmpty());
  const uint64_t reads = subscription->catch_up_reads();
  fanout.Deliver("s", replayer_.Append("s", 10));  // The tail keeps 8..10.
  EXPECT_EQ(PollUntil(*subscription, 10), Range(1, 10));
  EXPECT_GT(subscription->catch_up_reads(), reads) << "3..7 are only in the Replayer";
  fanout.Deliver("s", replayer_.Append("s", 1));
  EXPECT_THAT(PollSequences(*subscription), ElementsAre(11)) << "back to live";
}

TEST_F(FanOutTest, FilteredCatchUpFromTheTailSkipsOtherTenants) {
  SubscribeOptions options = Options();
  options.queue_capacity = 1;
  options.filter.tenant = "a";
  auto subscription = SubscribeLive(options);
  const uint64_t reads = subscription->catch_up_reads();
  Publish(2, "a");  // 1, 2
  Publish(3, "b");  // 3..5
  Publish(2, "a");  // 6, 7
  EXPECT_EQ(PollUntil(*subscription, 4), (std::vector<uint64_t>{1, 2, 6, 7}));
  EXPECT_EQ(subscription->catch_up_reads(), reads);
  Publish(1, "b");
  EXPECT_THAT(PollSequences(*subscription), IsEmpty());
  EXPECT_EQ(subscription->position().sequence, 8u) << "the position passes other tenants' events";
}

TEST_F(FanOutTest, FollowFromEarliestReplaysInPagesThenGoesLive) {
  replayer_.Append("s", 10);
  SubscribeOptions options = Options(Position::Earliest());
  options.catch_up_page = 3;
  auto subscription = Subscribe(options);
  EXPECT_THAT(PollSequences(*subscription), ElementsAre(1, 2, 3));
  EXPECT_THAT(PollSequences(*subscription), ElementsAre(4, 5, 6));
  EXPECT_THAT(PollSequences(*subscription), ElementsAre(7, 8, 9));
  EXPECT_THAT(PollSequences(*subscription), ElementsAre(10));
  EXPECT_EQ(subscription->catch_up_reads(), 4u);
  Publish(2);
  EXPECT_THAT(PollSequences(*subscription), ElementsAre(11, 12));
  EXPECT_EQ(subscription->catch_up_reads(), 4u) << "live events need no reads";
}

TEST_F(FanOutTest, LiveEventsDuringReplayAreNotRepeated) {
  replayer_.Append("s", 4);
  auto subscription = Subscribe(Options(Position::Earliest()));
  Publish(2);  // Arrive while the subscription still has history to read.
  std::vector<uint64_t> received;
  for (int i = 0; i < 10 && received.size() < 6; ++i) {
    std::vector<uint64_t> batch = PollSequences(*subscription);
    received.insert(received.end(), batch.begin(), batch.end());
  }
  EXPECT_EQ(received, (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
  Publish(1);
  EXPECT_THAT(PollSequences(*subscription), ElementsAre(7));
}

TEST_F(FanOutTest, HoleInLiveDeliveryIsFilledFromTheReplayer) {
  auto subscription = SubscribeLive(Options());
  std::vector<EventPtr> stored = replayer_.Append("s", 3);
  fanout_.Deliver("s", {stored[0]});
  fanout_.Deliver("s", {stored[2]});  // 2 never delivered live.
  std::vector<uint64_t> received;
  for (int i = 0; i < 10 && received.size() < 3; ++i) {
    std::vector<uint64_t> batch = PollSequences(*subscription);
    received.insert(received.end(), batch.begin(), batch.end());
  }
  EXPECT_EQ(received, (std::vector<uint64_t>{1, 2, 3}));
}

TEST_F(FanOutTest, RetentionGapDuringCatchUpIsANoticeThenOldest) {
  replayer_.Append("s", 10);
  replayer_.Evict("s", 6);
  auto subscription = Subscribe(Options(Position::After(Cursor::For("s", kEpoch, 2))));
  ASSERT_OK_AND_ASSIGN(std::vector<EventPtr> events, subscription->Poll(100));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]->type, kGapNoticeType);
  EXPECT_EQ(events[0]->attributes.at(kNoticeFirst), "3");
  EXPECT_EQ(events[0]->attributes.at(kNoticeLast), "5");
  EXPECT_EQ(events[0]->attributes.at(kNoticeCount), "3");
  EXPECT_EQ(events[0]->attributes.at(kNoticeRanges), "3-5");
  EXPECT_THAT(PollSequences(*subscription), ElementsAre(6, 7, 8, 9, 10));
}

TEST_F(FanOutTest, SubscribeRejectsBadOptionsAndForeignCursors) {
  SubscribeOptions options = Options();
  options.queue_capacity = 0;
  EXPECT_THAT(fanout_.Subscribe(options), HasErrorKind(ErrorKind::kInvalidArgument));
  options = Options();
  options.catch_up_page = 0;
  EXPECT_THAT(fanout_.Subscribe(options), HasErrorKind(ErrorKind::kInvalidArgument));
  options = Options();
  options.stream = "bad stream";
  EXPECT_THAT(fanout_.Subscribe(options), HasErrorKind(ErrorKind::kInvalidArgument));

  replayer_.Append("s", 3);
  EXPECT_THAT(fanout_.Subscribe(Options(Position::After(Cursor::For("s", kEpoch + 1, 1)))),
              HasErrorKind(ErrorKind::kCursorMismatch));
  EXPECT_THAT(fanout_.Subscribe(Options(Position::After(Cursor::For("t", kEpoch, 1)))),
              HasErrorKind(ErrorKind::kCursorMismatch));
  EXPECT_THAT(fanout_.Subscribe(Options(Position::After(Cursor::For("s", kEpoch, 4)))),
              HasErrorKind(ErrorKind::kCursorMismatch));
  EXPECT_FALSE(fanout_.HasSubscribers("s")) << "a rejected subscribe leaves nothing behind";
}

TEST_F(FanOutTest, PollNeedsRoomForOneEvent) {
  auto subscription = Subscribe(Options());
  EXPECT_THAT(subscription->Poll(0), HasErrorKind(ErrorKind::kInvalidArgument));
}

TEST_F(FanOutTest, CancelEndsWithClosed) {
  auto subscription = Subscribe(Options());
  Publish(2);
  subscription->Cancel();
  EXPECT_THAT(subscription->Poll(10), HasErrorKind(ErrorKind::kClosed));
}

TEST_F(FanOutTest, CloseAllDrainsQueuedEventsThenClosed) {
  auto subscription = SubscribeLive(Options());
  Publish(3);
  fanout_.CloseAll();
  Publish(1);  // After closing: not delivered.
  EXPECT_THAT(PollSequences(*subscription, 2), ElementsAre(1, 2));
  EXPECT_THAT(PollSequences(*subscription, 2), ElementsAre(3));
  EXPECT_THAT(subscription->Poll(10), HasErrorKind(ErrorKind::kClosed));
  EXPECT_THAT(fanout_.Subscribe(Options()), HasErrorKind(ErrorKind::kClosed));
}

TEST_F(FanOutTest, NextWaitsForEventsFromAnotherThread) {
  auto subscription = Subscribe(Options());
  std::thread publisher([&] { Publish(2); });
  std::vector<uint64_t> received;
  for (int i = 0; i < 10 && received.size() < 2; ++i) {
    ASSERT_OK_AND_ASSIGN(std::vector<EventPtr> events, subscription->Next(10, absl::Seconds(10)));
    for (const EventPtr& event : events) received.push_back(event->sequence);
  }
  publisher.join();
  EXPECT_THAT(received, ElementsAre(1, 2));
}

TEST_F(FanOutTest, SubscriptionOutlivingTheFanOutSeesClosed) {
  auto fanout = std::make_unique<FanOut>(&replayer_, &clock_);
  SubscribeOptions options = Options();
  absl::StatusOr<std::unique_ptr<Subscription>> subscription = fanout->Subscribe(options);
  ASSERT_THAT(subscription, IsOk());
  fanout.reset();
  EXPECT_THAT((*subscription)->Poll(10), HasErrorKind(ErrorKind::kClosed));
}

// ---- The delivery thread (FanOutOptions::inline_subscribers) ----

// Reads `count` events with Next, as a blocked reader would.
std::vector<uint64_t> ReadWithNext(Subscription& subscription, size_t count) {
  std::vector<uint64_t> received;
  for (int i = 0; i < 1000 && received.size() < count; ++i) {
    absl::StatusOr<std::vector<EventPtr>> events = subscription.Next(64, absl::Seconds(10));
    if (!events.ok()) break;
    for (const EventPtr& event : *events) received.push_back(event->sequence);
  }
  return received;
}

std::vector<uint64_t> OneTo(uint64_t last) {
  std::vector<uint64_t> out;
  for (uint64_t s = 1; s <= last; ++s) out.push_back(s);
  return out;
}

class DispatchedFanOutTest : public FanOutTest {
 protected:
  static FanOutOptions AllDispatched() {
    FanOutOptions options;
    options.inline_subscribers = 0;
    options.max_backlog = 8;  // Small, so publishers also wait for room.
    return options;
  }
  void PublishTo(FanOut& fanout, int count) { fanout.Deliver("s", replayer_.Append("s", count)); }

  FanOut dispatched_{&replayer_, &clock_, AllDispatched()};
};

TEST_F(DispatchedFanOutTest, EverySubscriberGetsEveryEventOnceInOrder) {
  ASSERT_OK_AND_ASSIGN(auto live, dispatched_.Subscribe(Options()));
  ASSERT_OK_AND_ASSIGN(auto follower, dispatched_.Subscribe(Options(Position::Earliest())));
  SubscribeOptions small = Options();
  small.queue_capacity = 3;  // Overflows: catches up from the Replayer.
  ASSERT_OK_AND_ASSIGN(auto slow, dispatched_.Subscribe(small));
  constexpr int kEvents = 600;
  std::thread publisher([&] {
    for (int sent = 0; sent < kEvents; sent += 6) PublishTo(dispatched_, 6);
  });
  std::vector<uint64_t> a, b, c;
  std::thread reader_a([&] { a = ReadWithNext(*live, kEvents); });
  std::thread reader_b([&] { b = ReadWithNext(*follower, kEvents); });
  c = ReadWithNext(*slow, kEvents);
  publisher.join();
  reader_a.join();
  reader_b.join();
  EXPECT_EQ(a, OneTo(kEvents));
  EXPECT_EQ(b, OneTo(kEvents));
  EXPECT_EQ(c, OneTo(kEvents));
}

TEST_F(DispatchedFanOutTest, CloseAllOffersWhatTheDeliveryThreadHoldsFirst) {
  ASSERT_OK_AND_ASSIGN(auto subscription, dispatched_.Subscribe(Options()));
  ASSERT_THAT(PollSequences(*subscription), IsEmpty());  // Live from here.
  PublishTo(dispatched_, 5);
  dispatched_.CloseAll();
  EXPECT_THAT(PollSequences(*subscription), ElementsAre(1, 2, 3, 4, 5));
  EXPECT_THAT(subscription->Poll(10), HasErrorKind(ErrorKind::kClosed));
}

TEST_F(DispatchedFanOutTest, WakeupIsCalledFromTheDeliveryThread) {
  ASSERT_OK_AND_ASSIGN(auto subscription, dispatched_.Subscribe(Options()));
  ASSERT_THAT(PollSequences(*subscription), IsEmpty());
  Notification woken;
  std::thread::id waker;
  subscription->SetWakeup([&] {
    if (woken.HasBeenNotified()) return;
    waker = std::this_thread::get_id();
    woken.Notify();
  });
  PublishTo(dispatched_, 1);
  woken.WaitForNotification();
  EXPECT_NE(waker, std::this_thread::get_id()) << "woken on the publishing thread";
  subscription->SetWakeup(nullptr);
  EXPECT_THAT(PollSequences(*subscription), ElementsAre(1));
}

// Few subscribers: offered before Deliver returns, as before.
TEST_F(FanOutTest, StreamsWithFewSubscribersAreOfferedBeforeDeliverReturns) {
  FanOutOptions options;
  options.inline_subscribers = 1;
  FanOut fanout(&replayer_, &clock_, options);
  ASSERT_OK_AND_ASSIGN(auto first, fanout.Subscribe(Options()));
  ASSERT_THAT(PollSequences(*first), IsEmpty());
  fanout.Deliver("s", replayer_.Append("s", 2));
  EXPECT_THAT(PollSequences(*first), ElementsAre(1, 2));
  // A second subscriber moves the stream to the delivery thread.
  ASSERT_OK_AND_ASSIGN(auto second, fanout.Subscribe(Options()));
  ASSERT_THAT(PollSequences(*second), IsEmpty());
  fanout.Deliver("s", replayer_.Append("s", 2));
  EXPECT_THAT(ReadWithNext(*first, 2), ElementsAre(3, 4));
  EXPECT_THAT(ReadWithNext(*second, 2), ElementsAre(3, 4));
}

// A driver without history: subscriptions start at `latest`, and kCatchUp
// falls back to dropping with a notice.
TEST(HistorylessFanOutTest, OnlyLatestAndCatchUpDegradesToDropOldest) {
  ManualClock clock;
  FanOut fanout(nullptr, &clock);
  SubscribeOptions options;
  options.stream = "s";
  options.after = Position::Earliest();
  EXPECT_THAT(fanout.Subscribe(options), HasErrorKind(ErrorKind::kInvalidArgument));

  options.after = Position::Latest();
  options.queue_capacity = 1;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Subscription> subscription, fanout.Subscribe(options));
  std::vector<Event> events(3);
  for (int i = 0; i < 3; ++i) {
    events[i].stream = "s";
    events[i].type = "t";
    events[i].sequence = 5 + i;  // Starts wherever the driver is.
  }
  fanout.Deliver("s", absl::MakeConstSpan(events));
  ASSERT_OK_AND_ASSIGN(std::vector<EventPtr> got, subscription->Poll(10));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0]->type, kDroppedNoticeType);
  EXPECT_EQ(got[0]->attributes.at(kNoticeRanges), "5-6");
  EXPECT_EQ(got[1]->sequence, 7u);
}

}  // namespace
}  // namespace keel
