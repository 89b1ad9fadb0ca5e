// Sequences as positions, for readers that keep numbers (a lakehouse's
// rows): GET /v1/streams/{s}/cursor?sequence=N and ?after_sequence=N on
// replay and SSE, checked as cursors are — a retention gap below the
// oldest event, a mismatch ahead of the head.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/cmd/run_keel.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class SequenceCursorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(daemon_.Start());
    http_ = daemon_.NewClient();
    for (int i = 1; i <= 5; ++i) {
      ASSERT_OK_AND_ASSIGN(PublishedEvent event, Publish(*http_, "orders", "order.created", "{}"));
      cursors_.push_back(event.cursor);
    }
  }

  absl::StatusOr<client::ClientResponse> CursorAt(const std::string& sequence) {
    return http_->Get(
        client::BuildTarget({"v1", "streams", "orders", "cursor"}, {{"sequence", sequence}}));
  }
  absl::StatusOr<client::ClientResponse> ReplayAfter(const std::string& sequence) {
    return http_->Get(
        client::BuildTarget({"v1", "streams", "orders", "events"}, {{"after_sequence", sequence}}));
  }
  static std::vector<uint64_t> Sequences(const std::string& page) {
    std::vector<uint64_t> sequences;
    const json::value parsed = json::parse(page);
    for (const json::value& event : parsed.at("events").as_array()) {
      sequences.push_back(event.at("sequence").to_number<uint64_t>());
    }
    return sequences;
  }

  InProcessDaemon daemon_;
  std::unique_ptr<client::HttpClient> http_;
  std::vector<std::string> cursors_;
};

TEST_F(SequenceCursorTest, ASequenceNamesTheCursorOfItsEvent) {
  ASSERT_OK_AND_ASSIGN(client::ClientResponse found, CursorAt("3"));
  ASSERT_EQ(found.status, 200) << found.body;
  json::value body = json::parse(found.body);
  EXPECT_EQ(body.at("cursor").as_string(), cursors_[2]);
  EXPECT_EQ(body.at("sequence").to_number<uint64_t>(), 3u);
  ASSERT_OK_AND_ASSIGN(client::ClientResponse before_all, CursorAt("0"));
  EXPECT_EQ(before_all.status, 200) << before_all.body;
}

TEST_F(SequenceCursorTest, ReplayAfterASequenceReadsTheEventsAfterIt) {
  ASSERT_OK_AND_ASSIGN(client::ClientResponse page, ReplayAfter("3"));
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_THAT(Sequences(page.body), ElementsAre(4, 5));
  ASSERT_OK_AND_ASSIGN(client::ClientResponse all, ReplayAfter("0"));
  EXPECT_THAT(Sequences(all.body), ElementsAre(1, 2, 3, 4, 5));
  const testing::KeelRun cli = testing::RunKeel(
      {"replay", "--server", daemon_.address(), "--stream", "orders", "--after-sequence", "4"});
  ASSERT_EQ(cli.code, 0) << cli.err;
  EXPECT_THAT(cli.out, HasSubstr(R"("sequence":5)"));
  EXPECT_THAT(cli.out, ::testing::Not(HasSubstr(R"("sequence":4)")));
}

TEST_F(SequenceCursorTest, ASequenceAheadOfTheHeadIsAMismatch) {
  ASSERT_OK_AND_ASSIGN(client::ClientResponse ahead, CursorAt("6"));
  EXPECT_EQ(ahead.status, 409) << ahead.body;
  EXPECT_EQ(ErrorCode(ahead), "cursor_mismatch");
  ASSERT_OK_AND_ASSIGN(client::ClientResponse replay, ReplayAfter("6"));
  EXPECT_EQ(ErrorCode(replay), "cursor_mismatch");
}

TEST_F(SequenceCursorTest, ASequenceRetentionRemovedIsAGap) {
  ASSERT_OK(daemon_.bus().Declare("orders", *StreamPolicy::Parse("max_events=2")));
  ASSERT_OK(daemon_.bus().Trim(100).status());  // Keeps 4 and 5.
  ASSERT_OK_AND_ASSIGN(client::ClientResponse trimmed, CursorAt("2"));
  EXPECT_EQ(trimmed.status, 410) << trimmed.body;
  EXPECT_EQ(ErrorCode(trimmed), "retention_gap");
  ASSERT_OK_AND_ASSIGN(client::ClientResponse replay, ReplayAfter("1"));
  EXPECT_EQ(ErrorCode(replay), "retention_gap");
  // Just before the oldest retained event is still a position.
  ASSERT_OK_AND_ASSIGN(client::ClientResponse edge, ReplayAfter("3"));
  EXPECT_THAT(Sequences(edge.body), ElementsAre(4, 5));
}

TEST_F(SequenceCursorTest, ABadSequenceOrTwoStartsAreRefused) {
  ASSERT_OK_AND_ASSIGN(client::ClientResponse word, CursorAt("three"));
  EXPECT_EQ(word.status, 400) << word.body;
  ASSERT_OK_AND_ASSIGN(client::ClientResponse missing,
                       http_->Get(client::BuildTarget({"v1", "streams", "orders", "cursor"})));
  EXPECT_EQ(missing.status, 400) << missing.body;
  ASSERT_OK_AND_ASSIGN(
      client::ClientResponse both,
      http_->Get(client::BuildTarget({"v1", "streams", "orders", "events"},
                                     {{"after_sequence", "1"}, {"after", "earliest"}})));
  EXPECT_EQ(both.status, 400) << both.body;
}

TEST_F(SequenceCursorTest, SseAfterASequenceDeliversTheEventsAfterIt) {
  client::SseOptions options;
  options.stream = "orders";
  options.after_sequence = "3";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<client::SseReader> reader, daemon_.OpenSse(options));
  ASSERT_OK_AND_ASSIGN(std::vector<client::SseFrame> frames, ReadEvents(*reader, 2));
  EXPECT_THAT(SequencesOf(frames), ElementsAre(4, 5));
}

}  // namespace
}  // namespace keel::daemon_test
