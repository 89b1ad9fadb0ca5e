// Sequencing: gap-free, strictly increasing per-stream sequences from 1, under
// concurrent publishers, for single events and batches; receipts that match
// what is stored.
#include <gmock/gmock.h>

#include <algorithm>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"
#include "keel/tests/conformance/conformance.h"
#include "keel/tests/conformance/helpers.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::conformance {

void LinkSequenceTests() {}

namespace {

using ::testing::ElementsAre;

void ExpectReceiptCursorMatches(const Receipt& receipt, uint64_t epoch) {
  EXPECT_EQ(receipt.cursor.sequence, receipt.sequence);
  EXPECT_EQ(receipt.cursor.stream_tag, StreamFingerprint(receipt.stream));
  EXPECT_EQ(receipt.cursor.epoch, epoch);
  absl::StatusOr<Cursor> decoded = Cursor::Decode(receipt.cursor.Encode());
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, receipt.cursor);
}

TEST_P(SequenceConformanceTest, FirstPublishGetsSequenceOne) {
  ASSERT_OK_AND_ASSIGN(Receipt receipt, bus().Publish(MakeEvent("orders")));
  EXPECT_EQ(receipt.stream, "orders");
  EXPECT_EQ(receipt.sequence, 1u);
  EXPECT_FALSE(receipt.id.empty());
  EXPECT_FALSE(receipt.duplicate);
  ExpectReceiptCursorMatches(receipt, epoch());
}

TEST_P(SequenceConformanceTest, StreamsAreSequencedIndependently) {
  ASSERT_OK_AND_ASSIGN(std::vector<Receipt> a, PublishN(bus(), "stream.a", 3));
  ASSERT_OK_AND_ASSIGN(std::vector<Receipt> b, PublishN(bus(), "stream.b", 2));
  ASSERT_OK_AND_ASSIGN(std::vector<Receipt> a2, PublishN(bus(), "stream.a", 1));
  EXPECT_THAT(Sequences(a), ElementsAre(1, 2, 3));
  EXPECT_THAT(Sequences(b), ElementsAre(1, 2));
  EXPECT_THAT(Sequences(a2), ElementsAre(4));
}

TEST_P(SequenceConformanceTest, ConcurrentPublishersGetGapFreeSequencesPerStream) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 25;  // Each thread publishes this many events per stream.
  const std::vector<std::string> streams = {"conc.a", "conc.b", "conc.c"};

  // receipts[t] holds thread t's receipts in the order it published them.
  std::vector<std::vector<Receipt>> receipts(kThreads);
  std::vector<absl::Status> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        for (const std::string& stream : streams) {
          absl::StatusOr<Receipt> receipt =
              bus().Publish(MakeEvent(stream, "test.event", absl::StrCat(t, "-", round)));
          if (!receipt.ok()) {
            errors[t] = receipt.status();
            return;
          }
          receipts[t].push_back(*std::move(receipt));
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const absl::Status& error : errors) ASSERT_OK(error);

  const uint64_t per_stream = kThreads * kRounds;
  for (const std::string& stream : streams) {
    SCOPED_TRACE(stream);
    std::vector<uint64_t> sequences;
    std::set<std::string> expected_payloads;
    for (int t = 0; t < kThreads; ++t) {
      uint64_t previous = 0;  // One thread's publishes get increasing sequences.
      for (const Receipt& receipt : receipts[t]) {
        if (receipt.stream != stream) continue;
        EXPECT_GT(receipt.sequence, previous);
        previous = receipt.sequence;
        sequences.push_back(receipt.sequence);
        ExpectReceiptCursorMatches(receipt, epoch());
      }
      for (int round = 0; round < kRounds; ++round) {
        expected_payloads.insert(absl::StrCat(t, "-", round));
      }
    }
    std::sort(sequences.begin(), sequences.end());
    // Sorted receipts equal 1..N: unique, gap-free, starting at 1.
    EXPECT_EQ(sequences, Range(1, per_stream));

    ASSERT_OK_AND_ASSIGN(std::vector<Event> stored, ReplayStream(replayer(), stream));
    EXPECT_EQ(Sequences(stored), Range(1, per_stream));
    std::multiset<std::string> payloads;
    for (const Event& event : stored) payloads.insert(event.payload);
    EXPECT_EQ(payloads,
              std::multiset<std::string>(expected_payloads.begin(), expected_payloads.end()));
  }
}

TEST_P(SequenceConformanceTest, ConcurrentBatchesGetConsecutiveRuns) {
  constexpr int kThreads = 4;
  constexpr int kBatches = 10;
  constexpr int kBatchSize = 5;
  std::vector<std::vector<std::vector<Receipt>>> batches(kThreads);
  std::vector<absl::Status> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int b = 0; b < kBatches; ++b) {
        std::vector<Event> events;
        for (int k = 0; k < kBatchSize; ++k) {
          events.push_back(MakeEvent("", "test.batch", absl::StrCat(t, "-", b, "-", k)));
        }
        absl::StatusOr<std::vector<Receipt>> receipts =
            bus().PublishBatch("batches", std::move(events));
        if (!receipts.ok()) {
          errors[t] = receipts.status();
          return;
        }
        batches[t].push_back(*std::move(receipts));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const absl::Status& error : errors) ASSERT_OK(error);

  // Each batch is one consecutive run; the stored event at each sequence is
  // the one the receipt names.
  ASSERT_OK_AND_ASSIGN(std::vector<Event> stored, ReplayStream(replayer(), "batches"));
  ASSERT_EQ(Sequences(stored), Range(1, kThreads * kBatches * kBatchSize));
  for (int t = 0; t < kThreads; ++t) {
    for (int b = 0; b < static_cast<int>(batches[t].size()); ++b) {
      const std::vector<Receipt>& receipts = batches[t][b];
      ASSERT_EQ(receipts.size(), static_cast<size_t>(kBatchSize));
      ASSERT_GE(receipts[0].sequence, 1u);
      for (int k = 0; k < kBatchSize; ++k) {
        ASSERT_EQ(receipts[k].sequence, receipts[0].sequence + k);
        ASSERT_LE(receipts[k].sequence, stored.size());
        EXPECT_EQ(stored[receipts[k].sequence - 1].payload, absl::StrCat(t, "-", b, "-", k));
      }
    }
  }
}

TEST_P(SequenceConformanceTest, StoredEventKeepsPublishedFields) {
  Event event = MakeEvent("fields", "order.created", "{\"total\":42}");
  event.tenant = "acme";
  event.content_type = "application/json";
  event.attributes = {{"source", "web"}, {"trace", "abc123"}};
  event.id = "my-own-id";
  ASSERT_OK_AND_ASSIGN(Receipt receipt, bus().Publish(event));
  ASSERT_OK_AND_ASSIGN(Receipt generated, bus().Publish(MakeEvent("fields")));

  ASSERT_OK_AND_ASSIGN(std::vector<Event> stored, ReplayStream(replayer(), "fields"));
  ASSERT_EQ(stored.size(), 2u);
  const Event& got = stored[0];
  EXPECT_EQ(got.stream, "fields");
  EXPECT_EQ(got.sequence, 1u);
  EXPECT_EQ(got.id, "my-own-id");
  EXPECT_EQ(receipt.id, "my-own-id");
  EXPECT_EQ(got.type, "order.created");
  EXPECT_EQ(got.tenant, "acme");
  EXPECT_EQ(got.payload, "{\"total\":42}");
  EXPECT_EQ(got.content_type, "application/json");
  EXPECT_EQ(got.attributes, event.attributes);
  EXPECT_NE(got.time, absl::InfinitePast()) << "the bus assigns the publish time";
  // An id the publisher left empty is generated and reported in the receipt.
  EXPECT_FALSE(stored[1].id.empty());
  EXPECT_EQ(stored[1].id, generated.id);
  EXPECT_NE(stored[1].id, got.id);
}

TEST_P(SequenceConformanceTest, BinaryPayloadIsStoredVerbatim) {
  std::string payload("\0\x01\xff\xfe binary\n", 12);  // Embedded NUL and high bytes.
  ASSERT_OK(bus().Publish(MakeEvent("binary", "blob.put", payload)));
  ASSERT_OK_AND_ASSIGN(std::vector<Event> stored, ReplayStream(replayer(), "binary"));
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].payload, payload);
}

}  // namespace
}  // namespace keel::conformance
