// Overflow policies: what a subscriber whose queue fills up observes.
// kCatchUp loses nothing, kDropOldest reports exactly what it dropped,
// kDisconnect ends the subscription with kSlowConsumer. Queues are tiny and
// nobody reads while publishing, so every policy is exercised; subscriptions
// start live (SubscribeLive) so that the queue is in play from the first event.
#include <gmock/gmock.h>

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "keel/core/errors.h"
#include "keel/tests/conformance/conformance.h"
#include "keel/tests/conformance/helpers.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::conformance {

void LinkOverflowTests() {}

namespace {

using ::keel::testing::HasErrorKind;
using ::testing::IsEmpty;

constexpr size_t kTinyQueue = 4;

SubscribeOptions TinyQueue(absl::string_view stream, OverflowPolicy overflow) {
  SubscribeOptions options;
  options.stream = std::string(stream);
  options.after = Position::Latest();
  options.queue_capacity = kTinyQueue;
  options.overflow = overflow;
  return options;
}

TEST_P(OverflowConformanceTest, CatchUpDeliversEverythingInOrder) {
  ASSERT_OK_AND_ASSIGN(auto subscription,
                       SubscribeLive(bus(), TinyQueue("catchup", OverflowPolicy::kCatchUp)));
  constexpr int kEvents = 200;  // 50x the queue, published without reading.
  ASSERT_OK(PublishN(bus(), "catchup", kEvents));
  ReadResult result = ReadThrough(*subscription, kEvents);
  ASSERT_OK(result.status);
  EXPECT_THAT(result.notices, IsEmpty()) << "catch-up must not drop anything";
  EXPECT_EQ(Sequences(result.events), Range(1, kEvents));
}

TEST_P(OverflowConformanceTest, CatchUpKeepsUpWhenReadingInterleavesWithPublishing) {
  ASSERT_OK_AND_ASSIGN(auto subscription,
                       SubscribeLive(bus(), TinyQueue("interleaved", OverflowPolicy::kCatchUp)));
  std::vector<EventPtr> received;
  for (int round = 0; round < 10; ++round) {
    ASSERT_OK(PublishN(bus(), "interleaved", 7));  // Overflows the queue every round.
    ASSERT_OK_AND_ASSIGN(std::vector<EventPtr> batch, subscription->Poll(3));
    received.insert(received.end(), batch.begin(), batch.end());
  }
  ReadResult rest = ReadThrough(*subscription, 70);
  ASSERT_OK(rest.status);
  received.insert(received.end(), rest.all.begin(), rest.all.end());
  EXPECT_EQ(Sequences(received), Range(1, 70));
}

// A reader far slower than its publishers overflows again and again while
// they run, catching up each time (from the stream's recent tail or from the
// store) and rejoining live: it still sees every event once, in order.
TEST_P(OverflowConformanceTest, SlowReaderCatchesUpWhilePublishersRun) {
  ASSERT_OK_AND_ASSIGN(auto subscription,
                       SubscribeLive(bus(), TinyQueue("racing", OverflowPolicy::kCatchUp)));
  constexpr int kPublishers = 4;
  constexpr int kEach = 300;
  std::vector<std::thread> publishers;
  std::atomic<int> failures{0};
  for (int p = 0; p < kPublishers; ++p) {
    publishers.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        if (!PublishN(bus(), "racing", 1).ok()) failures.fetch_add(1);
      }
    });
  }
  std::vector<uint64_t> received;
  const absl::Time end = absl::Now() + kLongWait;
  while (received.size() < kPublishers * kEach && absl::Now() < end) {
    ASSERT_OK_AND_ASSIGN(std::vector<EventPtr> batch, subscription->Next(3, kWait));
    for (const EventPtr& event : batch) received.push_back(event->sequence);
  }
  for (std::thread& publisher : publishers) publisher.join();
  ASSERT_EQ(failures.load(), 0);
  EXPECT_EQ(received, Range(1, kPublishers * kEach));
}

TEST_P(OverflowConformanceTest, DropOldestReportsExactlyTheDroppedSequences) {
  SubscribeOptions options = TinyQueue("dropping", OverflowPolicy::kDropOldest);
  options.notice_window = absl::Milliseconds(10);
  ASSERT_OK_AND_ASSIGN(auto subscription, SubscribeLive(bus(), options));
  constexpr uint64_t kEvents = 50;
  ASSERT_OK(PublishN(bus(), "dropping", kEvents));

  std::vector<uint64_t> received;
  std::set<uint64_t> dropped;
  int notices = 0;
  const absl::Time end = absl::Now() + kLongWait;
  while (received.size() + dropped.size() < kEvents && absl::Now() < end) {
    ASSERT_OK_AND_ASSIGN(std::vector<EventPtr> batch, subscription->Next(100, kWait));
    for (const EventPtr& event : batch) {
      if (event->sequence != 0) {
        received.push_back(event->sequence);
        continue;
      }
      ++notices;
      ASSERT_EQ(event->type, kDroppedNoticeType);
      EXPECT_EQ(event->stream, "dropping");
      std::set<uint64_t> named = NoticeRangeSequences(*event);
      ASSERT_FALSE(named.empty()) << "ranges: " << event->attributes.at(kNoticeRanges);
      EXPECT_EQ(NoticeAttribute(*event, kNoticeCount), named.size());
      EXPECT_EQ(NoticeAttribute(*event, kNoticeFirst), *named.begin());
      EXPECT_EQ(NoticeAttribute(*event, kNoticeLast), *named.rbegin());
      for (uint64_t sequence : named) {
        EXPECT_TRUE(dropped.insert(sequence).second) << sequence << " reported twice";
      }
    }
  }
  EXPECT_GE(notices, 1);
  // Received and dropped partition 1..N: nothing silently lost, nothing both.
  std::set<uint64_t> all(dropped);
  for (uint64_t sequence : received) {
    EXPECT_TRUE(all.insert(sequence).second) << sequence << " received and reported dropped";
  }
  EXPECT_EQ(std::vector<uint64_t>(all.begin(), all.end()), Range(1, kEvents));
  EXPECT_TRUE(std::is_sorted(received.begin(), received.end()));
  // The oldest go; the newest queue-full is what the reader gets.
  ASSERT_GE(received.size(), kTinyQueue);
  EXPECT_EQ(std::vector<uint64_t>(received.end() - kTinyQueue, received.end()),
            Range(kEvents - kTinyQueue + 1, kEvents));
}

TEST_P(OverflowConformanceTest, DisconnectEndsWithSlowConsumer) {
  ASSERT_OK_AND_ASSIGN(auto slow,
                       SubscribeLive(bus(), TinyQueue("disconnect", OverflowPolicy::kDisconnect)));
  constexpr int kEvents = 20;
  ASSERT_OK(PublishN(bus(), "disconnect", kEvents)) << "a slow consumer never blocks publishers";
  ReadResult result = ReadToError(*slow);
  EXPECT_THAT(result.status, HasErrorKind(ErrorKind::kSlowConsumer));
  EXPECT_LT(result.events.size(), static_cast<size_t>(kEvents));
  // The subscription stays ended.
  EXPECT_THAT(slow->Poll(10), HasErrorKind(ErrorKind::kSlowConsumer));
}

TEST_P(OverflowConformanceTest, SlowConsumerDoesNotAffectOtherSubscribers) {
  ASSERT_OK_AND_ASSIGN(auto slow,
                       SubscribeLive(bus(), TinyQueue("mixed", OverflowPolicy::kDisconnect)));
  SubscribeOptions roomy = TinyQueue("mixed", OverflowPolicy::kDisconnect);
  roomy.queue_capacity = 1000;
  ASSERT_OK_AND_ASSIGN(auto healthy, SubscribeLive(bus(), roomy));
  ASSERT_OK(PublishN(bus(), "mixed", 20));
  EXPECT_THAT(ReadToError(*slow).status, HasErrorKind(ErrorKind::kSlowConsumer));
  ReadResult result = ReadThrough(*healthy, 20);
  ASSERT_OK(result.status);
  EXPECT_EQ(Sequences(result.events), Range(1, 20));
}

}  // namespace
}  // namespace keel::conformance
