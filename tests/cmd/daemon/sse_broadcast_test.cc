// Live SSE readers of one stream share writes (cmd/keel/server/sse_broadcast.h):
// a reader that stops reading holds back nobody and still gets every event,
// and a reader that resumes behind the others gets exactly the rest.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/sse_broadcast.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

// Publishes `count` events numbered from `first` in batches of 1000, each
// with `pad` bytes of padding.
void PublishNumbered(client::HttpClient& http, const std::string& stream, int first, int count,
                     size_t pad) {
  const std::string padding(pad, 'p');
  for (int done = 0; done < count;) {
    json::array events;
    for (int i = 0; i < 1000 && done < count; ++i, ++done) {
      events.push_back(json::object{{"type", "n"},
                                    {"data", json::object{{"n", first + done}, {"pad", padding}}}});
    }
    ASSERT_OK_AND_ASSIGN(auto response, PostEvents(http, stream, json::serialize(events)));
    ASSERT_EQ(response.status, 201) << response.body;
  }
}

// Waits until `count` SSE connections are served by shared writes.
void WaitForSharedConnections(InProcessDaemon& daemon, double count) {
  auto http = daemon.NewClient();
  const absl::Time deadline = absl::Now() + kWait;
  double shared = -1;
  while (absl::Now() < deadline) {
    absl::StatusOr<client::ClientResponse> metrics = http->Get("/metrics");
    ASSERT_OK(metrics.status());
    shared = MetricValue(metrics->body, "keel_sse_shared_connections");
    if (shared == count) return;
    absl::SleepFor(absl::Milliseconds(5));
  }
  FAIL() << "shared SSE connections: " << shared << ", expected " << count;
}

using Readers = std::vector<std::unique_ptr<client::SseReader>>;

// Opens `count` readers of `stream` (after=latest) and waits until they are
// all on shared writes.
void OpenSharedReaders(InProcessDaemon& daemon, const std::string& stream, int count,
                       Readers& readers) {
  client::SseOptions sse;
  sse.stream = stream;
  for (int i = 0; i < count; ++i) {
    ASSERT_OK_AND_ASSIGN(auto reader, daemon.OpenSse(sse));
    readers.push_back(std::move(reader));
  }
  WaitForSharedConnections(daemon, count);
}

// No keepalive and no further event comes to set off another write.
DaemonOptions QuietDaemonOptions() {
  DaemonOptions options;
  options.server.sse_keepalive = absl::Seconds(600);
  return options;
}

// More events than one write carries (sse_batch, 256) arrive at once, and
// then nothing: the rest must not wait for later traffic.
TEST(SseBroadcastTest, ABurstLargerThanOneWriteArrivesWhole) {
  InProcessDaemon daemon(QuietDaemonOptions());
  ASSERT_OK(daemon.Start());
  Readers readers;
  ASSERT_NO_FATAL_FAILURE(OpenSharedReaders(daemon, "burst", 1, readers));
  auto http = daemon.NewClient();
  PublishNumbered(*http, "burst", 0, 1000, 10);
  ASSERT_OK_AND_ASSIGN(auto frames, ReadEvents(*readers[0], 1000, absl::Seconds(20)));
  EXPECT_THAT(SequencesOf(frames), ElementsAreArray(Range(1, 1000)));
}

// Shutdown right after a burst that takes shared readers several writes
// (16 events each here): they get every event queued for them, then the
// stream ends.
TEST(SseBroadcastTest, ShutdownWritesWhatWasQueuedToSharedReadersThenEndsTheirStreams) {
  constexpr int kEvents = 200;  // Within a subscription's queue (256).
  DaemonOptions options = QuietDaemonOptions();
  options.server.sse_batch = 16;
  InProcessDaemon daemon(options);
  ASSERT_OK(daemon.Start());
  Readers readers;
  ASSERT_NO_FATAL_FAILURE(OpenSharedReaders(daemon, "closing", 2, readers));
  auto http = daemon.NewClient();
  PublishNumbered(*http, "closing", 0, kEvents, 10);
  daemon.Stop();
  for (auto& reader : readers) {
    ASSERT_OK_AND_ASSIGN(auto frames, ReadEvents(*reader, kEvents, absl::Seconds(20)));
    EXPECT_THAT(SequencesOf(frames), ElementsAreArray(Range(1, kEvents)));
    absl::StatusOr<std::vector<client::SseFrame>> after = ReadEvents(*reader, 1, absl::Seconds(20));
    EXPECT_FALSE(after.ok());
    EXPECT_NE(after.status().code(), absl::StatusCode::kDeadlineExceeded)
        << "the stream did not end: " << after.status();
  }
}

// A round visits its readers in chunks, taking new events between
// chunks, so that readers later in a round already get them: under steady
// traffic, readers in every chunk get each event once, in order.
TEST(SseBroadcastTest, ReadersInEveryChunkOfARoundGetEachEventOnce) {
  // Two chunks on the one SSE thread.
  constexpr int kReaders = static_cast<int>(server::SseBroadcast::kChunkMembers) + 72;
  constexpr int kPublishes = 30;
  constexpr int kEventsEach = 5;
  DaemonOptions options = QuietDaemonOptions();
  options.server.sse_threads = 1;
  InProcessDaemon daemon(options);
  ASSERT_OK(daemon.Start());
  Readers readers;
  ASSERT_NO_FATAL_FAILURE(OpenSharedReaders(daemon, "chunked", kReaders, readers));
  auto http = daemon.NewClient();
  // Publishes keep coming for several flush intervals, during rounds and
  // between them.
  for (int i = 0; i < kPublishes; ++i) {
    ASSERT_NO_FATAL_FAILURE(PublishNumbered(*http, "chunked", i * kEventsEach, kEventsEach, 10));
    absl::SleepFor(absl::Milliseconds(20));
  }
  constexpr int kEvents = kPublishes * kEventsEach;
  for (int r = 0; r < kReaders; ++r) {
    ASSERT_OK_AND_ASSIGN(auto frames, ReadEvents(*readers[r], kEvents));
    ASSERT_THAT(SequencesOf(frames), ElementsAreArray(Range(1, kEvents))) << "reader " << r;
  }
  // One more event: each reader's next frame must be it, not a repeat.
  ASSERT_NO_FATAL_FAILURE(PublishNumbered(*http, "chunked", kEvents, 1, 10));
  for (int r = 0; r < kReaders; ++r) {
    ASSERT_OK_AND_ASSIGN(auto next, ReadEvents(*readers[r], 1));
    EXPECT_THAT(SequencesOf(next), ElementsAre(kEvents + 1)) << "reader " << r;
  }
}

TEST(SseBroadcastTest, AReaderThatStopsReadingHoldsBackNobodyAndLosesNothing) {
  constexpr int kEvents = 20'000;
  DaemonOptions options;
  options.server.sse_window = 64;  // Falls out of the shared writes early.
  InProcessDaemon daemon(options);
  ASSERT_OK(daemon.Start());
  Readers readers;
  ASSERT_NO_FATAL_FAILURE(OpenSharedReaders(daemon, "shared", 2, readers));
  client::SseReader& reading = *readers[0];
  client::SseReader& stalled = *readers[1];
  absl::StatusOr<std::vector<client::SseFrame>> read;
  std::thread reader([&] { read = ReadEvents(reading, kEvents); });
  // About 14 MB of frames: more than the stalled connection's socket
  // buffers hold, so its writes stop while the other reader goes on.
  auto http = daemon.NewClient();
  PublishNumbered(*http, "shared", 0, kEvents, 500);
  reader.join();
  ASSERT_OK(read.status());
  EXPECT_EQ(SequencesOf(*read), Range(1, kEvents));

  ASSERT_OK_AND_ASSIGN(auto late, ReadEvents(stalled, kEvents));
  EXPECT_EQ(SequencesOf(late), Range(1, kEvents));
  for (int i = 0; i < kEvents; i += 1999) {
    EXPECT_EQ(FrameJson(late[i]).at("data").at("n").to_number<int>(), i);
  }
  EXPECT_THAT(ReadEvents(stalled, 1, absl::Milliseconds(300)),
              keel::testing::StatusIs(absl::StatusCode::kDeadlineExceeded))
      << "a duplicate or an event nobody published";
}

TEST(SseBroadcastTest, AReaderResumingBehindTheOthersGetsExactlyTheRest) {
  InProcessDaemon daemon;
  ASSERT_OK(daemon.Start());
  auto http = daemon.NewClient();
  client::SseOptions sse;
  sse.stream = "behind";
  ASSERT_OK_AND_ASSIGN(auto ahead, daemon.OpenSse(sse));
  WaitForSharedConnections(daemon, 1);
  PublishNumbered(*http, "behind", 0, 100, 10);
  ASSERT_OK_AND_ASSIGN(auto first, ReadEvents(*ahead, 100));
  ASSERT_THAT(SequencesOf(first), ElementsAreArray(Range(1, 100)));

  // Resumes at event 40 while the first reader is live at 100.
  sse.last_event_id = *first[39].id;
  ASSERT_OK_AND_ASSIGN(auto resumed, daemon.OpenSse(sse));
  WaitForSharedConnections(daemon, 2);  // It joined the first one's writes.
  PublishNumbered(*http, "behind", 100, 200, 10);
  ASSERT_OK_AND_ASSIGN(auto rest, ReadEvents(*resumed, 260));
  EXPECT_THAT(SequencesOf(rest), ElementsAreArray(Range(41, 300)));
  ASSERT_OK_AND_ASSIGN(auto more, ReadEvents(*ahead, 200));
  EXPECT_THAT(SequencesOf(more), ElementsAreArray(Range(101, 300)));
  for (auto* reader : {ahead.get(), resumed.get()}) {
    EXPECT_THAT(ReadEvents(*reader, 1, absl::Milliseconds(300)),
                keel::testing::StatusIs(absl::StatusCode::kDeadlineExceeded))
        << "a duplicate or an event nobody published";
  }
}

}  // namespace
}  // namespace keel::daemon_test
