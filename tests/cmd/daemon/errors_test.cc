// Every error code of the HTTP API from a table of bad inputs: status, JSON
// error code, and that a rejected request stored nothing. The codes of a
// daemon with tokens or a rate limit (401, 403, 429) have their table in
// access_test.cc.
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/client/errors.h"
#include "keel/cmd/keel/client/sse_parser.h"
#include "keel/core/cursor.h"
#include "keel/core/errors.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/cmd/daemon/raw_connection.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

using ::testing::HasSubstr;

constexpr size_t kBodyLimit = 256 << 10;

struct BadRequest {
  std::string name;
  std::string method;
  std::string target;
  std::string body;
  client::Headers headers;
  int status;
  std::string code;
};

client::Headers JsonType() { return {{"Content-Type", "application/json"}}; }

// A cursor with one character changed (still 36 URL-safe characters).
std::string Edited(std::string cursor) {
  cursor[10] = cursor[10] == 'A' ? 'B' : 'A';
  return cursor;
}

class ErrorsTest : public ::testing::Test {
 protected:
  static DaemonOptions Options() {
    DaemonOptions options;
    options.server.body_limit = kBodyLimit;
    return options;
  }

  void SetUp() override {
    ASSERT_OK(daemon_.Start());
    http_ = daemon_.NewClient();
    for (int i = 0; i < 3; ++i) {
      ASSERT_OK_AND_ASSIGN(PublishedEvent event, Publish(*http_, "errs", "t", absl::StrCat(i)));
      errs_.push_back(event);
    }
    for (int i = 0; i < 2; ++i) {
      ASSERT_OK_AND_ASSIGN(PublishedEvent event, Publish(*http_, "other", "t", absl::StrCat(i)));
      other_.push_back(event);
    }
  }

  StoreSnapshot Snapshot() { return SnapshotOf(daemon_.bus()); }

  InProcessDaemon daemon_{Options()};
  std::unique_ptr<client::HttpClient> http_;
  std::vector<PublishedEvent> errs_;
  std::vector<PublishedEvent> other_;
};

TEST_F(ErrorsTest, TableOfBadRequests) {
  const std::string events = "/v1/streams/errs/events";
  const std::string big_data(130 << 10, 'x');  // Over the 128 KiB event limit, under the body limit.
  const std::vector<BadRequest> table = {
      // invalid_argument
      {"bad stream name", "POST", "/v1/streams/bad%20name!/events", R"({"type":"t","data":1})",
       JsonType(), 400, "invalid_argument"},
      {"stream name too long", "POST", "/v1/streams/" + std::string(256, 's') + "/events",
       R"({"type":"t","data":1})", JsonType(), 400, "invalid_argument"},
      {"bad stream name on replay", "GET", "/v1/streams/a%2Fb/events", "", {}, 400,
       "invalid_argument"},
      {"empty type", "POST", events, R"({"type":"","data":1})", JsonType(), 400, "invalid_argument"},
      {"missing type", "POST", events, R"({"data":1})", JsonType(), 400, "invalid_argument"},
      {"type not a string", "POST", events, R"({"type":5,"data":1})", JsonType(), 400,
       "invalid_argument"},
      {"unknown field", "POST", events, R"({"type":"t","data":1,"sequence":9})", JsonType(), 400,
       "invalid_argument"},
      {"non-JSON body", "POST", events, "{not json", JsonType(), 400, "invalid_argument"},
      {"empty body", "POST", events, "", JsonType(), 400, "invalid_argument"},
      {"empty batch", "POST", events, "[]", JsonType(), 400, "invalid_argument"},
      {"batch with one bad event", "POST", events, R"([{"type":"t"},{"type":"t","x":1}])",
       JsonType(), 400, "invalid_argument"},
      {"attribute not a string", "POST", events, R"({"type":"t","attributes":{"k":1}})",
       JsonType(), 400, "invalid_argument"},
      {"bad tenant", "POST", events, R"({"type":"t","tenant":"a b"})", JsonType(), 400,
       "invalid_argument"},
      {"limit zero", "GET", events + "?limit=0", "", {}, 400, "invalid_argument"},
      {"limit not a number", "GET", events + "?limit=ten", "", {}, 400, "invalid_argument"},
      {"limit too large", "GET", events + "?limit=10001", "", {}, 400, "invalid_argument"},
      {"negative limit", "GET", events + "?limit=-1", "", {}, 400, "invalid_argument"},
      // invalid_cursor
      {"malformed after", "GET", events + "?after=garbage", "", {}, 400, "invalid_cursor"},
      {"malformed until", "GET", events + "?until=garbage", "", {}, 400, "invalid_cursor"},
      {"truncated cursor", "GET", events + "?after=" + errs_[0].cursor.substr(0, errs_[0].cursor.size() - 2),
       "", {}, 400, "invalid_cursor"},
      {"edited cursor", "GET", events + "?after=" + Edited(errs_[1].cursor), "", {}, 400,
       "invalid_cursor"},
      // not_found
      {"unknown route", "GET", "/v2/streams", "", {}, 404, "not_found"},
      {"unknown stream sub-resource", "GET", "/v1/streams/errs/bogus", "", {}, 404, "not_found"},
      {"root", "GET", "/", "", {}, 404, "not_found"},
      // method_not_allowed
      {"DELETE events", "DELETE", events, "", {}, 405, "method_not_allowed"},
      {"PATCH bounds", "PATCH", "/v1/streams/errs", "{}", JsonType(), 405, "method_not_allowed"},
      {"POST sse", "POST", "/v1/streams/errs/sse", "{}", JsonType(), 405, "method_not_allowed"},
      {"POST metrics", "POST", "/metrics", "", {}, 405, "method_not_allowed"},
      {"POST stream list", "POST", "/v1/streams", "{}", JsonType(), 405, "method_not_allowed"},
      // cursor_mismatch
      {"cursor of another stream", "GET", events + "?after=" + other_[0].cursor, "", {}, 409,
       "cursor_mismatch"},
      {"until of another stream", "GET", events + "?until=" + other_[1].cursor, "", {}, 409,
       "cursor_mismatch"},
      // payload_too_large
      {"body over the body limit", "POST", events,
       absl::StrCat(R"({"type":"t","data":")", std::string(kBodyLimit + 1024, 'y'), R"("})"),
       JsonType(), 413, "payload_too_large"},
      {"event over the event limit", "POST", events,
       absl::StrCat(R"({"type":"t","data":")", big_data, R"("})"), JsonType(), 413,
       "payload_too_large"},
      // headers_too_large (431)
      {"headers over the header limit", "GET", "/v1/streams/errs", "",
       {{"X-Padding", std::string(20 << 10, 'h')}}, 431, "headers_too_large"},
      // unsupported_media_type
      {"text/plain body", "POST", events, R"({"type":"t","data":1})",
       {{"Content-Type", "text/plain"}}, 415, "unsupported_media_type"},
      {"no content type", "POST", events, R"({"type":"t","data":1})", {}, 415,
       "unsupported_media_type"},
  };
  const auto before = Snapshot();
  ASSERT_EQ(before.size(), 2u);
  for (const BadRequest& bad : table) {
    SCOPED_TRACE(bad.name);
    // A fresh connection per case: some errors close the connection.
    client::HttpClient http("127.0.0.1", daemon_.port());
    absl::StatusOr<client::ClientResponse> response =
        http.Request(bad.method, bad.target, bad.body, bad.headers);
    ASSERT_OK(response.status());
    EXPECT_EQ(response->status, bad.status) << response->body;
    EXPECT_EQ(ErrorCode(*response), bad.code) << response->body;
    EXPECT_THAT(response->Header("content-type"), HasSubstr("application/json"));
    absl::Status as_status = client::ErrorFromResponse(*response);
    EXPECT_THAT(std::string(as_status.message()), ::testing::StartsWith(bad.code + ": "));
    EXPECT_EQ(Snapshot(), before) << "a rejected request changed the store";
  }
  // The daemon still works afterwards and the stream continues gap-free.
  ASSERT_OK_AND_ASSIGN(PublishedEvent next, Publish(*http_, "errs", "t", "9"));
  EXPECT_EQ(next.sequence, 4u);
}

// A 405 tells the client what the path does take; a bad stream name is
// refused before the rest of its path is looked at (RFC 0004 §3).
TEST_F(ErrorsTest, MethodNotAllowedNamesThePathsMethods) {
  const struct {
    std::string method;
    std::string target;
    std::string allow;
  } cases[] = {
      {"DELETE", "/v1/streams/errs/events", "GET, POST"},
      {"PATCH", "/v1/streams/errs", "DELETE, GET, PUT"},
      {"POST", "/v1/streams/errs/sse", "GET"},
      {"GET", "/v1/streams/errs/groups/g:consume", "POST"},
      {"POST", "/v1/streams/errs/groups/g", "GET"},
      {"GET", "/v1/streams/errs/dead-letters/1:republish", "POST"},
      {"POST", "/metrics", "GET"},
  };
  const auto before = Snapshot();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.method + " " + c.target);
    ASSERT_OK_AND_ASSIGN(client::ClientResponse response,
                         http_->Request(c.method, c.target, "{}", JsonType()));
    EXPECT_EQ(response.status, 405) << response.body;
    EXPECT_EQ(ErrorCode(response), "method_not_allowed");
    EXPECT_EQ(response.Header("allow"), c.allow);
  }
  EXPECT_EQ(Snapshot(), before);
  ASSERT_OK_AND_ASSIGN(client::ClientResponse bad_name,
                       http_->Request("GET", "/v1/streams/bad%20name/whatever", "", {}));
  EXPECT_EQ(bad_name.status, 400) << bad_name.body;
  EXPECT_EQ(ErrorCode(bad_name), "invalid_argument");
}

TEST_F(ErrorsTest, CursorAheadOfTheHeadIsAMismatchNotTheLiveTail) {
  // A well-formed cursor of this stream and store, but past its head.
  const std::string ahead =
      Cursor::For("errs", daemon_.bus().replayer()->epoch(), 100).Encode();
  ASSERT_OK_AND_ASSIGN(auto response,
                       http_->Get(client::BuildTarget({"v1", "streams", "errs", "events"},
                                                      {{"after", ahead}})));
  EXPECT_EQ(response.status, 409) << response.body;
  EXPECT_EQ(ErrorCode(response), "cursor_mismatch");
  client::SseOptions options;
  options.stream = "errs";
  options.last_event_id = ahead;
  absl::StatusOr<std::unique_ptr<client::SseReader>> reader = daemon_.OpenSse(options);
  ASSERT_FALSE(reader.ok());
  ASSERT_TRUE(client::GetHttpError(reader.status()).has_value()) << reader.status();
  EXPECT_EQ(client::GetHttpError(reader.status())->status, 409);
}

TEST_F(ErrorsTest, SseRefusesBadPositionsBeforeStreaming) {
  struct Case {
    std::string name;
    client::SseOptions options;
    int status;
    std::string code;
  };
  std::vector<Case> cases;
  {
    Case c{"malformed Last-Event-ID", {}, 400, "invalid_cursor"};
    c.options.stream = "errs";
    c.options.last_event_id = "not-a-cursor";
    cases.push_back(c);
  }
  {
    Case c{"malformed after", {}, 400, "invalid_cursor"};
    c.options.stream = "errs";
    c.options.after = "bogus";
    cases.push_back(c);
  }
  {
    Case c{"Last-Event-ID of another stream", {}, 409, "cursor_mismatch"};
    c.options.stream = "errs";
    c.options.last_event_id = other_[1].cursor;
    cases.push_back(c);
  }
  {
    Case c{"after= cursor of another stream", {}, 409, "cursor_mismatch"};
    c.options.stream = "errs";
    c.options.after = other_[0].cursor;
    cases.push_back(c);
  }
  {
    Case c{"bad stream name", {}, 400, "invalid_argument"};
    c.options.stream = "no spaces";
    cases.push_back(c);
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<std::unique_ptr<client::SseReader>> reader = daemon_.OpenSse(c.options);
    ASSERT_FALSE(reader.ok()) << "the server streamed instead of refusing";
    std::optional<client::HttpError> error = client::GetHttpError(reader.status());
    ASSERT_TRUE(error.has_value()) << reader.status();
    EXPECT_EQ(error->status, c.status) << error->body;
    EXPECT_EQ(error->code, c.code) << error->body;
  }
  ASSERT_OK_AND_ASSIGN(auto metrics, http_->Get("/metrics"));
  EXPECT_THAT(metrics.body, HasSubstr("keel_errors_total{code=\"cursor_mismatch\"} 2\n"));
  EXPECT_THAT(metrics.body, HasSubstr("\nkeel_sse_connections 0\n"));
}

TEST_F(ErrorsTest, UnavailableWhileDraining) {
  // A kept-alive connection that the daemon sees again after it began to drain.
  ASSERT_OK(GetJson(*http_, "/healthz").status());
  const auto before = Snapshot();
  daemon_.api().SetDraining();
  daemon_.server().StopAccepting();
  ASSERT_OK_AND_ASSIGN(auto response, PostEvents(*http_, "errs", R"({"type":"t","data":1})"));
  EXPECT_EQ(response.status, 503) << response.body;
  EXPECT_EQ(ErrorCode(response), "unavailable");
  EXPECT_EQ(GetErrorKind(client::ErrorFromResponse(response)), ErrorKind::kUnavailable);
  EXPECT_EQ(Snapshot(), before);
  EXPECT_EQ(http_->connections_opened(), 1);
  // New connections are refused once the daemon stopped accepting.
  client::HttpClient late("127.0.0.1", daemon_.port(), client::ClientOptions{absl::Seconds(2), absl::Seconds(2)});
  absl::StatusOr<client::ClientResponse> refused = late.Get("/healthz");
  EXPECT_FALSE(refused.ok() && refused->status == 200);
}

// A store wiped and created again has a new epoch: a cursor handed out
// before is refused (409) on replay and on SSE, although the new stream has
// events at its sequence, instead of being read as a position in the new
// store.
TEST(StoreEpochTest, ACursorOfAWipedStoreIsAMismatch) {
  InProcessDaemon daemon;
  ASSERT_OK(daemon.Start());
  std::string old_cursor;
  {
    std::unique_ptr<client::HttpClient> http = daemon.NewClient();
    ASSERT_OK_AND_ASSIGN(PublishedEvent old, Publish(*http, "s", "t", "1"));
    old_cursor = old.cursor;
  }
  daemon.Stop();
  std::filesystem::remove_all(daemon.data_dir());
  ASSERT_OK(daemon.Start());
  std::unique_ptr<client::HttpClient> http = daemon.NewClient();
  for (int i = 0; i < 3; ++i) ASSERT_OK(Publish(*http, "s", "t", absl::StrCat(i)).status());

  ASSERT_OK_AND_ASSIGN(auto replay, http->Get(client::BuildTarget({"v1", "streams", "s", "events"},
                                                                  {{"after", old_cursor}})));
  EXPECT_EQ(replay.status, 409) << replay.body;
  EXPECT_EQ(ErrorCode(replay), "cursor_mismatch");
  EXPECT_THAT(replay.body, HasSubstr("epoch"));
  client::SseOptions options;
  options.stream = "s";
  options.last_event_id = old_cursor;
  absl::StatusOr<std::unique_ptr<client::SseReader>> reader = daemon.OpenSse(options);
  ASSERT_FALSE(reader.ok()) << "the server streamed instead of refusing";
  std::optional<client::HttpError> error = client::GetHttpError(reader.status());
  ASSERT_TRUE(error.has_value()) << reader.status();
  EXPECT_EQ(error->status, 409);
  EXPECT_EQ(error->code, "cursor_mismatch");
}

// A bus that closed under the server (the daemon closes it during
// shutdown, after it stopped taking requests) answers 503, not 500.
TEST(ClosedBusTest, RequestsAfterTheBusClosedAre503) {
  InProcessDaemon daemon;
  ASSERT_OK(daemon.Start());
  std::unique_ptr<client::HttpClient> http = daemon.NewClient();
  ASSERT_OK(Publish(*http, "s", "t", "1").status());
  ASSERT_OK(daemon.bus().Close());
  ASSERT_OK_AND_ASSIGN(auto publish, PostEvents(*http, "s", R"({"type":"t","data":2})"));
  EXPECT_EQ(publish.status, 503) << publish.body;
  EXPECT_EQ(ErrorCode(publish), "unavailable");
  ASSERT_OK_AND_ASSIGN(auto replay, http->Get("/v1/streams/s/events?after=earliest"));
  EXPECT_EQ(replay.status, 503) << replay.body;
  EXPECT_EQ(ErrorCode(replay), "unavailable");
}

class RetentionGapTest : public ::testing::Test {
 protected:
  static DaemonOptions Options() {
    DaemonOptions options;
    options.driver = "memory";
    options.config.Set("max_events_per_stream", "5");
    return options;
  }
  void SetUp() override {
    ASSERT_OK(daemon_.Start());
    http_ = daemon_.NewClient();
    for (int i = 0; i < 12; ++i) {
      ASSERT_OK_AND_ASSIGN(PublishedEvent event, Publish(*http_, "ring", "t", absl::StrCat(i)));
      published_.push_back(event);
    }
    ASSERT_OK_AND_ASSIGN(info_, daemon_.bus().replayer()->Bounds("ring"));
    ASSERT_GT(info_.first_sequence, 3u) << "the ring did not trim";
  }

  InProcessDaemon daemon_{Options()};
  std::unique_ptr<client::HttpClient> http_;
  std::vector<PublishedEvent> published_;
  StreamInfo info_;
};

TEST_F(RetentionGapTest, ReplayBelowTheOldestEventIs410WithCursors) {
  const PublishedEvent& requested = published_[1];  // Sequence 2, trimmed.
  ASSERT_OK_AND_ASSIGN(auto response,
                       http_->Get(client::BuildTarget({"v1", "streams", "ring", "events"},
                                                      {{"after", requested.cursor}})));
  EXPECT_EQ(response.status, 410) << response.body;
  EXPECT_EQ(ErrorCode(response), "retention_gap");
  json::object error = json::parse(response.body).at("error").as_object();
  EXPECT_EQ(error.at("requested").as_string(), requested.cursor);
  EXPECT_EQ(error.at("oldest").as_string(), published_[info_.first_sequence - 1].cursor);
  EXPECT_EQ(error.at("oldestSequence").to_number<uint64_t>(), info_.first_sequence);
  EXPECT_EQ(error.at("missed").to_number<uint64_t>(), info_.first_sequence - 3);
  EXPECT_EQ(GetErrorKind(client::ErrorFromResponse(response)), ErrorKind::kRetentionGap);
  // `earliest` is never a gap.
  ASSERT_OK_AND_ASSIGN(json::value page, GetJson(*http_, "/v1/streams/ring/events?after=earliest"));
  EXPECT_EQ(page.at("events").at(0).at("sequence").to_number<uint64_t>(), info_.first_sequence);
}

TEST_F(RetentionGapTest, SseSendsAGapFrameThenTheOldestRetainedEvents) {
  client::SseOptions options;
  options.stream = "ring";
  options.last_event_id = published_[1].cursor;
  ASSERT_OK_AND_ASSIGN(auto reader, daemon_.OpenSse(options));
  const size_t retained = 12 - info_.first_sequence + 1;
  ASSERT_OK_AND_ASSIGN(auto frames, ReadEvents(*reader, 1 + retained));
  EXPECT_EQ(frames[0].event, "keel.gap");
  EXPECT_FALSE(frames[0].id.has_value()) << "a gap frame must not move the resume position";
  json::object gap = FrameJson(frames[0]);
  EXPECT_EQ(gap.at("requested").as_string(), published_[1].cursor);
  EXPECT_EQ(gap.at("oldest").as_string(), published_[info_.first_sequence - 1].cursor);
  EXPECT_EQ(gap.at("missed").to_number<uint64_t>(), info_.first_sequence - 3);
  std::vector<uint64_t> sequences;
  for (size_t i = 1; i < frames.size(); ++i) {
    EXPECT_EQ(frames[i].event, "t");
    EXPECT_EQ(frames[i].id, published_[FrameSequence(frames[i]) - 1].cursor);
    sequences.push_back(FrameSequence(frames[i]));
  }
  EXPECT_EQ(sequences, Range(info_.first_sequence, 12));
  ASSERT_OK_AND_ASSIGN(auto metrics, http_->Get("/metrics"));
  EXPECT_THAT(metrics.body, HasSubstr("\nkeel_sse_gaps_total 1\n"));
}

// Retention overtaking a reader mid-stream: the reader stops reading and
// the ring moves past what it had not been sent yet. When it reads again it
// gets keel.gap frames naming exactly the sequences it missed, and every
// other event once, in order: no hole goes unannounced.
TEST(RetentionGapMidStreamTest, EveryHoleInWhatAReaderGetsIsAnnouncedByAGapFrame) {
  DaemonOptions options;
  options.driver = "memory";
  options.config.Set("max_events_per_stream", "200");
  // The stream's shared writer keeps this many recent events for its
  // readers (4096 by default): fewer, so the reader falls behind the ring.
  options.server.sse_window = 64;
  InProcessDaemon daemon(options);
  ASSERT_OK(daemon.Start());
  RawConnection slow(daemon.port(), /*receive_buffer=*/4096);
  ASSERT_TRUE(slow.connected());
  slow.Send("GET /v1/streams/ring/sse?after=earliest HTTP/1.1\r\nHost: keel\r\n\r\n");
  std::string received;
  while (!absl::StrContains(received, "\r\n\r\n")) {
    const std::string chunk = slow.Read();
    ASSERT_TRUE(chunk != "<timeout>" && chunk != "<error>" && !chunk.empty());
    received += chunk;
  }
  ASSERT_THAT(received, ::testing::StartsWith("HTTP/1.1 200"));

  // 2,000 events of 8 KiB while it reads nothing: far more than the socket
  // buffers, the shared writer's window and the ring (200 events) hold.
  constexpr uint64_t kEvents = 2000;
  constexpr uint64_t kBatch = 100;
  const std::string padding(8 << 10, 'p');
  std::unique_ptr<client::HttpClient> http = daemon.NewClient();
  for (uint64_t first = 0; first < kEvents; first += kBatch) {
    json::array events;
    for (uint64_t n = first; n < first + kBatch; ++n) {
      events.push_back(json::object{{"type", "t"}, {"data", json::object{{"n", n}, {"pad", padding}}}});
    }
    ASSERT_OK_AND_ASSIGN(auto response, PostEvents(*http, "ring", json::serialize(events)));
    ASSERT_EQ(response.status, 201) << response.body;
  }

  client::SseParser parser;
  parser.Feed(received.substr(received.find("\r\n\r\n") + 4));
  uint64_t last = 0;  // The last sequence received or announced missing.
  int gaps = 0;
  while (last < kEvents) {
    while (std::optional<client::SseFrame> frame = parser.Pop()) {
      if (!frame->IsEvent()) continue;
      if (frame->event == "keel.gap") {
        json::object gap = FrameJson(*frame);
        EXPECT_EQ(gap.at("first").to_number<uint64_t>(), last + 1) << frame->data;
        const uint64_t missing_to = gap.at("last").to_number<uint64_t>();
        EXPECT_EQ(gap.at("missed").to_number<uint64_t>(), missing_to - last) << frame->data;
        last = missing_to;
        ++gaps;
        continue;
      }
      const uint64_t sequence = FrameSequence(*frame);
      ASSERT_EQ(sequence, last + 1) << "an event lost without a gap frame, or repeated";
      EXPECT_EQ(FrameJson(*frame).at("data").at("n").to_number<uint64_t>(), sequence - 1);
      last = sequence;
    }
    const std::string chunk = slow.Read();
    ASSERT_TRUE(chunk != "<timeout>" && chunk != "<error>" && !chunk.empty())
        << "the stream stopped at sequence " << last;
    parser.Feed(chunk);
  }
  EXPECT_GE(gaps, 1) << "retention never overtook the reader: the test missed its case";
}

}  // namespace
}  // namespace keel::daemon_test
