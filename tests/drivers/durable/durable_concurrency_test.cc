// Many publishers on many streams through the group committer: every
// stream's sequences stay gap-free and every receipt matches what replay
// returns. Run under ThreadSanitizer by the sanitizer builds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "keel/statestore/memory/memory_store.h"
#include "keel/tests/drivers/durable/durable_test_util.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::testing {
namespace {

using ::testing::ElementsAreArray;

constexpr int kThreads = 16;
constexpr int kStreams = 64;
constexpr int kEventsPerThread = 400;

TEST(DurableConcurrencyTest, SixteenPublishersOnSixtyFourStreamsStayGapFree) {
  ASSERT_OK_AND_ASSIGN(auto bus, OpenDurableBus(std::make_shared<MemoryStore>(),
                                                Options(SyncMode::kAlways), DriverContext{}));
  // receipts[thread] = (stream index, sequence, payload) per publish.
  std::vector<std::vector<std::pair<int, Receipt>>> receipts(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      absl::BitGen gen;
      for (int i = 0; i < kEventsPerThread; ++i) {
        int stream = absl::Uniform(gen, 0, kStreams);
        Event event = NewEvent(absl::StrCat("s", stream), t * kEventsPerThread + i);
        absl::StatusOr<Receipt> receipt = bus->Publish(std::move(event));
        ASSERT_TRUE(receipt.ok()) << receipt.status();
        receipts[t].emplace_back(stream, *receipt);
      }
    });
  }
  for (auto& thread : threads) thread.join();

  absl::flat_hash_map<std::string, std::string> payload_of;  // "stream/seq" -> payload.
  size_t total = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kEventsPerThread; ++i) {
      const Receipt& receipt = receipts[t][i].second;
      auto [it, inserted] = payload_of.emplace(absl::StrCat(receipt.stream, "/", receipt.sequence),
                                               std::to_string(t * kEventsPerThread + i));
      EXPECT_TRUE(inserted) << "sequence handed out twice: " << it->first;
    }
  }
  for (int s = 0; s < kStreams; ++s) {
    const std::string stream = absl::StrCat("s", s);
    ASSERT_OK_AND_ASSIGN(std::vector<Event> events, ReadAll(*bus, stream));
    EXPECT_THAT(Sequences(events), ElementsAreArray(Range(1, events.size()))) << stream;
    for (const Event& event : events) {
      EXPECT_EQ(event.payload, payload_of[absl::StrCat(stream, "/", event.sequence)]);
    }
    total += events.size();
  }
  EXPECT_EQ(total, static_cast<size_t>(kThreads * kEventsPerThread));
}

}  // namespace
}  // namespace keel::testing
