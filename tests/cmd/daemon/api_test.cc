// The HTTP API over loopback: publish -> SSE, replay paging, filters,
// batches, idempotency, keep-alive reuse, /metrics, /healthz, /readyz.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/client/errors.h"
#include "keel/core/errors.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

using ::keel::testing::StatusIs;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(daemon_.Start());
    http_ = daemon_.NewClient();
  }

  std::vector<uint64_t> Sequences(const json::array& events) {
    std::vector<uint64_t> sequences;
    for (const json::value& event : events) {
      sequences.push_back(event.at("sequence").to_number<uint64_t>());
    }
    return sequences;
  }

  InProcessDaemon daemon_;
  std::unique_ptr<client::HttpClient> http_;
};

TEST_F(ApiTest, PublishedEventsArriveOverSseWithCursorIdsAndEventJson) {
  client::SseOptions options;
  options.stream = "orders";
  ASSERT_OK_AND_ASSIGN(auto reader, daemon_.OpenSse(options));
  // The stream starts with the retry advice.
  ASSERT_OK_AND_ASSIGN(client::SseFrame first, reader->Next(kWait));
  EXPECT_EQ(first.retry_ms, 100);
  EXPECT_FALSE(first.IsEvent());

  std::vector<PublishedEvent> published;
  for (int i = 1; i <= 5; ++i) {
    json::object body{{"type", "order.created"},
                      {"tenant", "acme"},
                      {"data", json::object{{"n", i}, {"text", "line1\nline2"}}},
                      {"attributes", json::object{{"source", "test"}}}};
    ASSERT_OK_AND_ASSIGN(auto response, PostEvents(*http_, "orders", json::serialize(body)));
    ASSERT_EQ(response.status, 201) << response.body;
    json::object receipt = json::parse(response.body).as_object();
    EXPECT_EQ(receipt.at("stream").as_string(), "orders");
    EXPECT_EQ(receipt.at("sequence").to_number<uint64_t>(), static_cast<uint64_t>(i));
    EXPECT_FALSE(receipt.at("duplicate").as_bool());
    published.push_back(PublishedEvent{static_cast<uint64_t>(i),
                                       std::string(receipt.at("cursor").as_string()),
                                       std::string(receipt.at("id").as_string()), false});
  }
  ASSERT_OK_AND_ASSIGN(auto frames, ReadEvents(*reader, 5));
  for (int i = 0; i < 5; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(frames[i].id, published[i].cursor);
    EXPECT_EQ(frames[i].event, "order.created");
    EXPECT_EQ(frames[i].data.find('\n'), std::string::npos) << "event JSON on one line";
    json::object event = FrameJson(frames[i]);
    EXPECT_EQ(event.at("stream").as_string(), "orders");
    EXPECT_EQ(event.at("sequence").to_number<uint64_t>(), published[i].sequence);
    EXPECT_EQ(event.at("cursor").as_string(), published[i].cursor);
    EXPECT_EQ(event.at("id").as_string(), published[i].id);
    EXPECT_EQ(event.at("type").as_string(), "order.created");
    EXPECT_EQ(event.at("tenant").as_string(), "acme");
    EXPECT_EQ(event.at("data").at("n").to_number<int>(), i + 1);
    EXPECT_EQ(event.at("data").at("text").as_string(), "line1\nline2");
    EXPECT_EQ(event.at("attributes").at("source").as_string(), "test");
    EXPECT_TRUE(event.at("time").is_string());
  }
}

TEST_F(ApiTest, SseAfterLatestOnlySeesNewEvents) {
  for (int i = 0; i < 5; ++i) ASSERT_OK(Publish(*http_, "live", "t", "1").status());
  client::SseOptions options;
  options.stream = "live";
  options.after = "latest";
  ASSERT_OK_AND_ASSIGN(auto reader, daemon_.OpenSse(options));
  for (int i = 0; i < 3; ++i) ASSERT_OK(Publish(*http_, "live", "t", "2").status());
  ASSERT_OK_AND_ASSIGN(auto frames, ReadEvents(*reader, 3));
  std::vector<uint64_t> sequences;
  for (const auto& frame : frames) sequences.push_back(FrameSequence(frame));
  EXPECT_THAT(sequences, ElementsAreArray(Range(6, 8)));
  // Nothing else is pending (keepalives only).
  absl::StatusOr<std::vector<client::SseFrame>> more = ReadEvents(*reader, 1, absl::Milliseconds(500));
  EXPECT_THAT(more, StatusIs(absl::StatusCode::kDeadlineExceeded));
}

TEST_F(ApiTest, SseAfterEarliestAndAfterCursorReplayThenGoLive) {
  std::vector<PublishedEvent> published;
  for (int i = 0; i < 6; ++i) {
    ASSERT_OK_AND_ASSIGN(auto event, Publish(*http_, "hist", "t", absl::StrCat(i)));
    published.push_back(event);
  }
  client::SseOptions earliest;
  earliest.stream = "hist";
  earliest.after = "earliest";
  ASSERT_OK_AND_ASSIGN(auto all, daemon_.OpenSse(earliest));
  client::SseOptions from_cursor;
  from_cursor.stream = "hist";
  from_cursor.after = published[3].cursor;
  ASSERT_OK_AND_ASSIGN(auto tail, daemon_.OpenSse(from_cursor));
  ASSERT_OK(Publish(*http_, "hist", "t", "99").status());
  ASSERT_OK_AND_ASSIGN(auto all_frames, ReadEvents(*all, 7));
  ASSERT_OK_AND_ASSIGN(auto tail_frames, ReadEvents(*tail, 3));
  std::vector<uint64_t> all_sequences, tail_sequences;
  for (const auto& f : all_frames) all_sequences.push_back(FrameSequence(f));
  for (const auto& f : tail_frames) tail_sequences.push_back(FrameSequence(f));
  EXPECT_THAT(all_sequences, ElementsAreArray(Range(1, 7)));
  EXPECT_THAT(tail_sequences, ElementsAreArray(Range(5, 7)));
}

TEST_F(ApiTest, ReplayPagesWithNextAndLimitUntilReachedEnd) {
  std::vector<PublishedEvent> published;
  for (int i = 0; i < 25; ++i) {
    ASSERT_OK_AND_ASSIGN(auto event, Publish(*http_, "paged", "t", absl::StrCat(i)));
    published.push_back(event);
  }
  std::vector<uint64_t> sequences;
  std::string after = "earliest";
  int pages = 0;
  while (true) {
    ASSERT_OK_AND_ASSIGN(json::value page,
                         GetJson(*http_, client::BuildTarget({"v1", "streams", "paged", "events"},
                                                             {{"after", after}, {"limit", "10"}})));
    ++pages;
    ASSERT_LE(pages, 3);
    const json::array& events = page.at("events").as_array();
    std::vector<uint64_t> got = Sequences(events);
    sequences.insert(sequences.end(), got.begin(), got.end());
    EXPECT_EQ(page.at("head").as_string(), published.back().cursor);
    EXPECT_EQ(page.at("headSequence").to_number<uint64_t>(), 25u);
    if (page.at("reachedEnd").as_bool()) {
      EXPECT_EQ(events.size(), 5u);
      break;
    }
    ASSERT_EQ(events.size(), 10u);
    EXPECT_EQ(page.at("next").as_string(), events.back().at("cursor").as_string());
    after = std::string(page.at("next").as_string());
  }
  EXPECT_EQ(pages, 3);
  EXPECT_THAT(sequences, ElementsAreArray(Range(1, 25)));
  for (size_t i = 0; i < published.size(); ++i) {
    // The cursor of each event equals its receipt's.
    ASSERT_OK_AND_ASSIGN(json::value page,
                         GetJson(*http_, client::BuildTarget({"v1", "streams", "paged", "events"},
                                                             {{"after", published[i].cursor},
                                                              {"limit", "1"}})));
    if (i + 1 < published.size()) {
      EXPECT_EQ(page.at("events").at(0).at("cursor").as_string(), published[i + 1].cursor);
    } else {
      EXPECT_TRUE(page.at("events").as_array().empty());
      EXPECT_TRUE(page.at("reachedEnd").as_bool());
    }
  }
  // `until` is inclusive and ends the scan.
  ASSERT_OK_AND_ASSIGN(json::value until,
                       GetJson(*http_, client::BuildTarget({"v1", "streams", "paged", "events"},
                                                           {{"after", published[4].cursor},
                                                            {"until", published[7].cursor}})));
  EXPECT_THAT(Sequences(until.at("events").as_array()), ElementsAreArray(Range(6, 8)));
  EXPECT_TRUE(until.at("reachedEnd").as_bool());
  // `latest` is an empty page at the end.
  ASSERT_OK_AND_ASSIGN(json::value latest,
                       GetJson(*http_, client::BuildTarget({"v1", "streams", "paged", "events"},
                                                           {{"after", "latest"}})));
  EXPECT_TRUE(latest.at("events").as_array().empty());
  EXPECT_TRUE(latest.at("reachedEnd").as_bool());
}

TEST_F(ApiTest, ReplayAndSseFilterByTenantAndTypePrefix) {
  client::SseOptions options;
  options.stream = "mixed";
  options.after = "earliest";
  options.tenant = "a";
  options.type = "order.";
  ASSERT_OK_AND_ASSIGN(auto filtered_sse, daemon_.OpenSse(options));
  struct Spec {
    const char* tenant;
    const char* type;
  };
  const std::vector<Spec> specs = {{"a", "order.created"}, {"b", "order.created"},
                                   {"a", "invoice.sent"},  {"a", "order.paid"},
                                   {"", "order.created"},  {"b", "invoice.sent"},
                                   {"a", "order.created"}, {"a", "orders.x"}};
  for (const Spec& spec : specs) {
    ASSERT_OK(Publish(*http_, "mixed", spec.type, "{}", spec.tenant).status());
  }
  auto replay = [&](std::vector<std::pair<std::string, std::string>> query) {
    query.emplace_back("after", "earliest");
    absl::StatusOr<json::value> page =
        GetJson(*http_, client::BuildTarget({"v1", "streams", "mixed", "events"}, query));
    EXPECT_OK(page);
    return page.ok() ? Sequences(page->at("events").as_array()) : std::vector<uint64_t>{};
  };
  EXPECT_THAT(replay({{"tenant", "a"}}), ElementsAreArray({1u, 3u, 4u, 7u, 8u}));
  EXPECT_THAT(replay({{"tenant", "b"}}), ElementsAreArray({2u, 6u}));
  EXPECT_THAT(replay({{"type", "order."}}), ElementsAreArray({1u, 2u, 4u, 5u, 7u}));
  EXPECT_THAT(replay({{"type", "order"}}), ElementsAreArray({1u, 2u, 4u, 5u, 7u, 8u}));
  EXPECT_THAT(replay({{"tenant", "a"}, {"type", "order."}}), ElementsAreArray({1u, 4u, 7u}));
  EXPECT_THAT(replay({{"tenant", "nobody"}}), ElementsAreArray(std::vector<uint64_t>{}));

  // Paging through a filter: `next` moves past skipped events.
  ASSERT_OK_AND_ASSIGN(json::value page,
                       GetJson(*http_, client::BuildTarget({"v1", "streams", "mixed", "events"},
                                                           {{"after", "earliest"},
                                                            {"tenant", "b"},
                                                            {"limit", "1"}})));
  EXPECT_THAT(Sequences(page.at("events").as_array()), ElementsAreArray({2u}));
  ASSERT_OK_AND_ASSIGN(json::value second,
                       GetJson(*http_, client::BuildTarget({"v1", "streams", "mixed", "events"},
                                                           {{"after", std::string(page.at("next").as_string())},
                                                            {"tenant", "b"},
                                                            {"limit", "1"}})));
  EXPECT_THAT(Sequences(second.at("events").as_array()), ElementsAreArray({6u}));

  ASSERT_OK_AND_ASSIGN(auto frames, ReadEvents(*filtered_sse, 3));
  std::vector<uint64_t> sse_sequences;
  for (const auto& frame : frames) sse_sequences.push_back(FrameSequence(frame));
  EXPECT_THAT(sse_sequences, ElementsAreArray({1u, 4u, 7u}));
  for (const auto& frame : frames) {
    EXPECT_EQ(FrameJson(frame).at("tenant").as_string(), "a");
  }
}

// Event data is stored as written (minus whitespace): a DOM round trip would
// turn 1.50 into 1.5E0 and round big integers.
TEST_F(ApiTest, EventDataKeepsTheNumbersAsWritten) {
  const std::string body =
      R"({"type":"t","data": {"total": 1.50, "big": 123456789012345678901234, "s": "a \"b\" c"}})";
  ASSERT_OK_AND_ASSIGN(auto response, PostEvents(*http_, "raw", body));
  ASSERT_EQ(response.status, 201) << response.body;
  ASSERT_OK_AND_ASSIGN(response, PostEvents(*http_, "raw", R"([{"type":"t","data":[1.0, 2e3]}])"));
  ASSERT_EQ(response.status, 201) << response.body;
  ASSERT_OK_AND_ASSIGN(auto page, http_->Get("/v1/streams/raw/events?after=earliest"));
  ASSERT_EQ(page.status, 200);
  EXPECT_THAT(page.body,
              HasSubstr(R"("data":{"total":1.50,"big":123456789012345678901234,"s":"a \"b\" c"})"));
  EXPECT_THAT(page.body, HasSubstr(R"("data":[1.0,2e3])"));
}

// When the text of "data" cannot be told for sure (a name written with
// escapes, or given twice), the value the JSON parser read is stored.
TEST_F(ApiTest, EventDataWithAnEscapedOrRepeatedNameIsTheParsedValue) {
  const std::string escaped = R"({"type":"t","d\u0061ta":{"n":1}})";
  const std::string repeated = R"({"type":"t","data":{"n":2},"data":{"n":3}})";
  for (const std::string& body : {escaped, repeated}) {
    ASSERT_OK_AND_ASSIGN(auto response, PostEvents(*http_, "names", body));
    ASSERT_EQ(response.status, 201) << response.body;
  }
  ASSERT_OK_AND_ASSIGN(auto page, http_->Get("/v1/streams/names/events?after=earliest"));
  ASSERT_EQ(page.status, 200);
  const json::array events = json::parse(page.body).at("events").as_array();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].at("data"), json::parse(escaped).at("data"));
  EXPECT_EQ(events[1].at("data"), json::parse(repeated).at("data"));
}

TEST_F(ApiTest, BatchPublishIsAllOrNothing) {
  ASSERT_OK_AND_ASSIGN(auto batch,
                       PostEvents(*http_, "batch",
                                  R"([{"type":"a","data":1},{"type":"b","data":2,"idempotencyKey":"k-b"}])"));
  ASSERT_EQ(batch.status, 201) << batch.body;
  json::array receipts = json::parse(batch.body).at("receipts").as_array();
  ASSERT_EQ(receipts.size(), 2u);
  EXPECT_EQ(receipts[0].at("sequence").to_number<uint64_t>(), 1u);
  EXPECT_EQ(receipts[1].at("sequence").to_number<uint64_t>(), 2u);

  // One bad event rejects the whole batch and stores nothing.
  ASSERT_OK_AND_ASSIGN(auto bad, PostEvents(*http_, "batch",
                                            R"([{"type":"a","data":1},{"type":"","data":2}])"));
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(ErrorCode(bad), "invalid_argument");
  EXPECT_THAT(bad.body, HasSubstr("event 1"));

  ASSERT_OK_AND_ASSIGN(StreamInfo info, daemon_.bus().replayer()->Bounds("batch"));
  EXPECT_EQ(info.last_sequence, 2u);
  EXPECT_EQ(info.count, 2u);
}

// A repeated idempotency key answers the first receipt with `duplicate`
// and appends nothing (rfcs/0004-http-api.md §4).
TEST_F(ApiTest, IdempotencyKeysDeduplicate) {
  // Idempotency-Key header on a single event.
  ASSERT_OK_AND_ASSIGN(auto first, PostEvents(*http_, "batch", R"({"type":"c","data":3})",
                                              {{"Idempotency-Key", "key-1"}}));
  ASSERT_OK_AND_ASSIGN(auto again, PostEvents(*http_, "batch", R"({"type":"c","data":3})",
                                              {{"Idempotency-Key", "key-1"}}));
  ASSERT_EQ(first.status, 201) << first.body;
  ASSERT_EQ(again.status, 201) << again.body;
  json::value first_receipt = json::parse(first.body);
  json::value again_receipt = json::parse(again.body);
  EXPECT_FALSE(first_receipt.at("duplicate").as_bool());
  EXPECT_TRUE(again_receipt.at("duplicate").as_bool());
  EXPECT_EQ(again_receipt.at("sequence"), first_receipt.at("sequence"));
  EXPECT_EQ(again_receipt.at("id"), first_receipt.at("id"));

  ASSERT_OK_AND_ASSIGN(StreamInfo info, daemon_.bus().replayer()->Bounds("batch"));
  EXPECT_EQ(info.last_sequence, 1u);
  EXPECT_EQ(info.count, 1u);
}

TEST_F(ApiTest, StreamsListAndBounds) {
  for (const char* stream : {"app.one", "app.two", "other"}) {
    ASSERT_OK(Publish(*http_, stream, "t", "1").status());
  }
  ASSERT_OK(Publish(*http_, "app.two", "t", "2").status());
  ASSERT_OK_AND_ASSIGN(json::value list,
                       GetJson(*http_, client::BuildTarget({"v1", "streams"}, {{"prefix", "app."}})));
  const json::array& streams = list.at("streams").as_array();
  ASSERT_EQ(streams.size(), 2u);
  EXPECT_EQ(streams[0].at("stream").as_string(), "app.one");
  EXPECT_EQ(streams[1].at("stream").as_string(), "app.two");
  EXPECT_EQ(streams[1].at("lastSequence").to_number<uint64_t>(), 2u);

  ASSERT_OK_AND_ASSIGN(json::value bounds, GetJson(*http_, "/v1/streams/app.two"));
  EXPECT_EQ(bounds.at("firstSequence").to_number<uint64_t>(), 1u);
  EXPECT_EQ(bounds.at("lastSequence").to_number<uint64_t>(), 2u);
  EXPECT_EQ(bounds.at("count").to_number<uint64_t>(), 2u);
  ASSERT_OK_AND_ASSIGN(StreamInfo info, daemon_.bus().replayer()->Bounds("app.two"));
  EXPECT_EQ(bounds.at("head").as_string(), info.head.Encode());
}

TEST_F(ApiTest, KeepAliveReusesOneConnection) {
  for (int i = 0; i < 20; ++i) {
    ASSERT_OK(Publish(*http_, "reuse", "t", "1").status());
    ASSERT_OK(GetJson(*http_, "/v1/streams/reuse").status());
  }
  EXPECT_EQ(http_->connections_opened(), 1);
  // An error response keeps the connection too.
  ASSERT_OK_AND_ASSIGN(auto missing, http_->Get("/nope"));
  EXPECT_EQ(missing.status, 404);
  ASSERT_OK(GetJson(*http_, "/healthz").status());
  EXPECT_EQ(http_->connections_opened(), 1);
}

TEST_F(ApiTest, MetricsExposeCountersAndHistograms) {
  client::SseOptions options;
  options.stream = "metered";
  options.after = "earliest";
  ASSERT_OK_AND_ASSIGN(auto reader, daemon_.OpenSse(options));
  for (int i = 0; i < 3; ++i) ASSERT_OK(Publish(*http_, "metered", "t", "12345").status());
  ASSERT_OK(ReadEvents(*reader, 3).status());
  ASSERT_OK_AND_ASSIGN(auto bad, PostEvents(*http_, "metered", "not json"));
  EXPECT_EQ(bad.status, 400);

  ASSERT_OK_AND_ASSIGN(auto metrics, http_->Get("/metrics"));
  ASSERT_EQ(metrics.status, 200);
  EXPECT_THAT(metrics.Header("content-type"), StartsWith("text/plain"));
  const std::string& text = metrics.body;
  EXPECT_THAT(text, HasSubstr("# TYPE keel_http_requests_total counter"));
  EXPECT_THAT(text, HasSubstr("\nkeel_published_events_total 3\n"));
  EXPECT_THAT(text, HasSubstr("\nkeel_published_bytes_total 15\n"));
  EXPECT_THAT(text, HasSubstr("keel_errors_total{code=\"invalid_argument\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("\nkeel_sse_connections 1\n"));
  EXPECT_THAT(text, HasSubstr("\nkeel_sse_delivered_events_total 3\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE keel_publish_latency_seconds histogram"));
  EXPECT_THAT(text, HasSubstr("keel_publish_latency_seconds_bucket{le=\"+Inf\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("keel_publish_latency_seconds_count 3\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE keel_store_write_latency_seconds histogram"));
  EXPECT_THAT(text, Not(HasSubstr("keel_store_write_latency_seconds_count 0\n")));
  EXPECT_THAT(text, HasSubstr("keel_sse_gaps_total"));
  // Catch-ups: store reads of SSE subscribers that fell behind (see sse_test.cc).
  EXPECT_THAT(text, HasSubstr("# TYPE keel_sse_catch_up_reads_total counter"));
}

TEST_F(ApiTest, HealthAndReadiness) {
  ASSERT_OK_AND_ASSIGN(json::value health, GetJson(*http_, "/healthz"));
  EXPECT_EQ(health.at("status").as_string(), "ok");
  ASSERT_OK_AND_ASSIGN(json::value ready, GetJson(*http_, "/readyz"));
  EXPECT_EQ(ready.at("status").as_string(), "ready");
  daemon_.api().SetDraining();
  ASSERT_OK_AND_ASSIGN(auto draining, http_->Get("/readyz"));
  EXPECT_EQ(draining.status, 503);
  EXPECT_EQ(ErrorCode(draining), "unavailable");
}

TEST(ServerOptionsTest, AServerRefusesACorsOriginThatWouldBreakTheResponseHead) {
  DaemonOptions options;
  options.server.cors_origin = "https://a.example\r\nSet-Cookie: x=1";
  InProcessDaemon daemon(options);
  EXPECT_THAT(daemon.Start(), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(DegradedDaemonTest, ReadyzSaysDegradedWithoutAStore) {
  DaemonOptions options;
  options.degraded = true;  // durable without a store, like `keel daemon --store none`.
  InProcessDaemon daemon(options);
  ASSERT_OK(daemon.Start());
  auto http = daemon.NewClient();
  ASSERT_OK_AND_ASSIGN(json::value ready, GetJson(*http, "/readyz"));
  EXPECT_EQ(ready.at("status").as_string(), "degraded");
  EXPECT_THAT(std::string(ready.at("reason").as_string()), Not(IsEmpty()));
  // It still serves.
  ASSERT_OK(Publish(*http, "s", "t", "1").status());
}

TEST(HttpClientTest, RetriesOnceWhenTheServerClosedAnIdleKeptAliveConnection) {
  DaemonOptions options;
  options.server.idle_timeout = absl::Milliseconds(100);
  InProcessDaemon daemon(options);
  ASSERT_OK(daemon.Start());
  auto http = daemon.NewClient();
  ASSERT_OK(Publish(*http, "idle", "t", "1").status());
  absl::SleepFor(absl::Milliseconds(600));  // The daemon closes the idle connection.
  ASSERT_OK_AND_ASSIGN(PublishedEvent second, Publish(*http, "idle", "t", "2"));
  EXPECT_EQ(second.sequence, 2u);
  EXPECT_EQ(http->connections_opened(), 2);
  ASSERT_OK_AND_ASSIGN(StreamInfo info, daemon.bus().replayer()->Bounds("idle"));
  EXPECT_EQ(info.count, 2u) << "the retry must not publish twice";
}

TEST(HttpClientTest, AHugeBodyGetsTheEarly413NotAConnectionError) {
  DaemonOptions options;
  options.server.body_limit = 64 << 10;
  InProcessDaemon daemon(options);
  ASSERT_OK(daemon.Start());
  auto http = daemon.NewClient();
  const std::string body =
      absl::StrCat(R"({"type":"t","data":")", std::string(16 << 20, 'z'), R"("})");
  ASSERT_OK_AND_ASSIGN(auto response, PostEvents(*http, "huge", body));
  EXPECT_EQ(response.status, 413);
  EXPECT_EQ(ErrorCode(response), "payload_too_large");
  // The client recovers on a new connection.
  ASSERT_OK(Publish(*http, "huge", "t", "1").status());
}

TEST(HttpClientTest, UnreachableServerIsUnavailable) {
  uint16_t port = 0;
  {
    InProcessDaemon daemon;
    ASSERT_OK(daemon.Start());
    port = daemon.port();
  }
  client::HttpClient http("127.0.0.1", port);
  absl::StatusOr<client::ClientResponse> response = http.Get("/healthz");
  EXPECT_EQ(response.status().code(), absl::StatusCode::kUnavailable) << response.status();
  EXPECT_EQ(GetErrorKind(response.status()), ErrorKind::kUnavailable);
}

}  // namespace
}  // namespace keel::daemon_test
