// `keel publish`, `keel replay`, `keel tail` and `keel streams` through
// keel::cli::Main against an in-process daemon.
#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "keel/cmd/keel/cli.h"
#include "keel/cmd/keel/command.h"
#include "keel/core/topic.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/cmd/run_keel.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

using Result = ::keel::testing::KeelRun;
using ::keel::testing::RunKeel;


std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

std::vector<json::object> JsonLines(const std::string& text) {
  std::vector<json::object> objects;
  for (const std::string& line : Lines(text)) {
    boost::system::error_code ec;
    json::value value = json::parse(line, ec);
    EXPECT_FALSE(ec) << "not a JSON line: " << line;
    if (!ec && value.is_object()) objects.push_back(value.as_object());
  }
  return objects;
}

std::vector<uint64_t> SequencesOf(const std::vector<json::object>& events) {
  std::vector<uint64_t> sequences;
  for (const json::object& event : events) {
    sequences.push_back(event.at("sequence").to_number<uint64_t>());
  }
  return sequences;
}

// A replay of a whole (short) stream.
ReplayRequest AllOf(const std::string& stream) {
  ReplayRequest request;
  request.stream = stream;
  return request;
}

class CliCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(daemon_.Start());
    server_ = daemon_.address();
  }

  Result PublishN(const std::string& stream, int n, const std::string& tenant = "") {
    Result last;
    for (int i = 0; i < n; ++i) {
      std::vector<std::string> args = {"publish", "--server", server_, "--stream", stream,
                                       "--type", "cli.test", "--data", absl::StrCat("{\"i\":", i, "}")};
      if (!tenant.empty()) {
        args.push_back("--tenant");
        args.push_back(tenant);
      }
      last = RunKeel(args);
      EXPECT_EQ(last.code, cli::kExitOk) << last.err;
    }
    return last;
  }

  testing::TempDir dir_;
  InProcessDaemon daemon_;
  std::string server_;
};

TEST_F(CliCommandsTest, PublishPrintsTheReceiptAndStoresTheEvent) {
  Result r = RunKeel({"publish", "--server", server_, "--stream", "orders", "--type",
                      "order.created", "--data", R"({"total":1.50,"items":[1,2]})", "--tenant",
                      "acme", "--attr", "source=cli", "--attr", "k=v=w"});
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  EXPECT_THAT(r.err, IsEmpty());
  std::vector<json::object> receipts = JsonLines(r.out);
  ASSERT_EQ(receipts.size(), 1u);
  EXPECT_EQ(receipts[0].at("stream").as_string(), "orders");
  EXPECT_EQ(receipts[0].at("sequence").to_number<uint64_t>(), 1u);
  EXPECT_FALSE(receipts[0].at("duplicate").as_bool());

  ASSERT_OK_AND_ASSIGN(ReplayPage page, daemon_.bus().replayer()->Replay(AllOf("orders")));
  ASSERT_EQ(page.events.size(), 1u);
  const Event& event = page.events[0];
  EXPECT_EQ(event.type, "order.created");
  EXPECT_EQ(event.tenant, "acme");
  EXPECT_EQ(event.content_type, "application/json");
  EXPECT_EQ(json::parse(event.payload), json::parse(R"({"total":1.50,"items":[1,2]})"));
  EXPECT_THAT(event.attributes, ElementsAre(std::pair<const std::string, std::string>("k", "v=w"),
                                            std::pair<const std::string, std::string>("source", "cli")));
  EXPECT_EQ(receipts[0].at("id").as_string(), event.id);
}

TEST_F(CliCommandsTest, PublishReadsDataFile) {
  const std::string path = dir_.Sub("event.json");
  std::ofstream(path) << "{\"from\": \"file\"}\n";
  Result r = RunKeel({"publish", "--server", server_, "--stream", "files", "--type", "t",
                      "--data-file", path});
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  ASSERT_OK_AND_ASSIGN(ReplayPage page, daemon_.bus().replayer()->Replay(AllOf("files")));
  ASSERT_EQ(page.events.size(), 1u);
  EXPECT_EQ(json::parse(page.events[0].payload), json::parse(R"({"from":"file"})"));
  Result missing = RunKeel({"publish", "--server", server_, "--stream", "files", "--type", "t",
                            "--data-file", dir_.Sub("missing.json")});
  EXPECT_EQ(missing.code, cli::kExitUsage);
}

// Disabled until idempotency keys deduplicate (issue 5, rfcs/0004-http-api.md §12).
TEST_F(CliCommandsTest, PublishHonoursIdempotencyKey) {
  const std::string path = dir_.Sub("event.json");
  std::ofstream(path) << "{\"from\": \"file\"}\n";
  Result first = RunKeel({"publish", "--server", server_, "--stream", "files", "--type", "t",
                          "--data-file", path, "--idempotency-key", "once"});
  Result again = RunKeel({"publish", "--server", server_, "--stream", "files", "--type", "t",
                          "--data-file", path, "--idempotency-key", "once"});
  ASSERT_EQ(first.code, cli::kExitOk) << first.err;
  ASSERT_EQ(again.code, cli::kExitOk) << again.err;
  EXPECT_FALSE(JsonLines(first.out).at(0).at("duplicate").as_bool());
  EXPECT_TRUE(JsonLines(again.out).at(0).at("duplicate").as_bool());
  ASSERT_OK_AND_ASSIGN(StreamInfo info, daemon_.bus().replayer()->Bounds("files"));
  EXPECT_EQ(info.count, 1u);
  ASSERT_OK_AND_ASSIGN(ReplayPage page, daemon_.bus().replayer()->Replay(AllOf("files")));
  EXPECT_EQ(json::parse(page.events.at(0).payload), json::parse(R"({"from":"file"})"));
}

TEST_F(CliCommandsTest, PublishErrors) {
  // Server errors: `code: message`, exit 1, nothing stored.
  Result bad_stream = RunKeel({"publish", "--server", server_, "--stream", "no spaces", "--type",
                               "t", "--data", "1"});
  EXPECT_EQ(bad_stream.code, cli::kExitFailure);
  EXPECT_THAT(bad_stream.err, HasSubstr("invalid_argument: stream name"));
  EXPECT_THAT(bad_stream.out, IsEmpty());
  Result too_big = RunKeel({"publish", "--server", server_, "--stream", "s", "--type", "t",
                            "--data", absl::StrCat("\"", std::string(200 << 10, 'x'), "\"")});
  EXPECT_EQ(too_big.code, cli::kExitFailure);
  EXPECT_THAT(too_big.err, HasSubstr("payload_too_large: "));
  ASSERT_OK_AND_ASSIGN(auto streams, daemon_.bus().replayer()->ListStreams("", 100));
  EXPECT_THAT(streams, IsEmpty());

  // Usage errors: exit 2.
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"publish", "--server", server_, "--type", "t", "--data", "1"},
           {"publish", "--server", server_, "--stream", "s", "--data", "1"},
           {"publish", "--server", server_, "--stream", "s", "--type", "t", "--data", "{oops"},
           {"publish", "--server", server_, "--stream", "s", "--type", "t", "--data", "1",
            "--data-file", "/dev/null"},
           {"publish", "--server", server_, "--stream", "s", "--type", "t", "--data", "1",
            "--attr", "novalue"},
           {"publish", "--server", "nohost", "--stream", "s", "--type", "t", "--data", "1"},
           {"publish", "--server", server_, "--stream", "s", "--type", "t", "--bogus"},
       }) {
    Result r = RunKeel(args);
    EXPECT_EQ(r.code, cli::kExitUsage) << absl::StrJoin(args, " ") << "\n" << r.err;
  }

  // Unreachable server: exit 1.
  InProcessDaemon gone;
  ASSERT_OK(gone.Start());
  const std::string gone_address = gone.address();
  gone.Stop();
  Result refused = RunKeel({"publish", "--server", gone_address, "--stream", "s", "--type", "t",
                            "--data", "1"});
  EXPECT_EQ(refused.code, cli::kExitFailure);
  EXPECT_THAT(refused.err, HasSubstr("cannot connect"));
}

TEST_F(CliCommandsTest, ReplayPrintsJsonLinesAndPagesWithAll) {
  PublishN("log", 10);
  Result all = RunKeel({"replay", "--server", server_, "--stream", "log", "--limit", "3", "--all"});
  ASSERT_EQ(all.code, cli::kExitOk) << all.err;
  std::vector<json::object> events = JsonLines(all.out);
  EXPECT_EQ(SequencesOf(events), Range(1, 10));
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].at("type").as_string(), "cli.test");
    EXPECT_EQ(events[i].at("data").at("i").to_number<size_t>(), i);
  }
  EXPECT_THAT(all.err, IsEmpty());

  // One page without --all; the continuation goes to stderr.
  Result page = RunKeel({"replay", "--server", server_, "--stream", "log", "--limit", "3"});
  ASSERT_EQ(page.code, cli::kExitOk) << page.err;
  std::vector<json::object> first = JsonLines(page.out);
  EXPECT_EQ(SequencesOf(first), Range(1, 3));
  const std::string next(first.back().at("cursor").as_string());
  EXPECT_THAT(page.err, HasSubstr("--after " + next));

  // --after a cursor and --until (inclusive).
  Result window = RunKeel({"replay", "--server", server_, "--stream", "log", "--after", next,
                           "--until", std::string(events[6].at("cursor").as_string())});
  ASSERT_EQ(window.code, cli::kExitOk) << window.err;
  EXPECT_EQ(SequencesOf(JsonLines(window.out)), Range(4, 7));

  // Events are printed as the daemon sent them, not re-serialised.
  ASSERT_EQ(RunKeel({"publish", "--server", server_, "--stream", "verbatim", "--type", "t",
                     "--data", "{\"big\":12345678901234567890,\"s\":\"a\\u00e9\"}"}).code,
            cli::kExitOk);
  Result verbatim = RunKeel({"replay", "--server", server_, "--stream", "verbatim"});
  ASSERT_OK_AND_ASSIGN(ReplayPage stored,
                       daemon_.bus().replayer()->Replay(AllOf("verbatim")));
  ASSERT_EQ(stored.events.size(), 1u);
  EXPECT_THAT(verbatim.out, HasSubstr("\"data\":" + stored.events[0].payload));
  EXPECT_THAT(verbatim.out, HasSubstr("12345678901234567890"));
}

TEST_F(CliCommandsTest, ReplayFiltersAndErrors) {
  PublishN("tenants", 3, "a");
  PublishN("tenants", 2, "b");
  Result b = RunKeel({"replay", "--server", server_, "--stream", "tenants", "--tenant", "b", "--all"});
  ASSERT_EQ(b.code, cli::kExitOk) << b.err;
  EXPECT_EQ(SequencesOf(JsonLines(b.out)), Range(4, 5));
  Result typed = RunKeel({"replay", "--server", server_, "--stream", "tenants", "--type", "nope"});
  ASSERT_EQ(typed.code, cli::kExitOk) << typed.err;
  EXPECT_THAT(typed.out, IsEmpty());

  Result bad_cursor = RunKeel({"replay", "--server", server_, "--stream", "tenants", "--after", "xyz"});
  EXPECT_EQ(bad_cursor.code, cli::kExitFailure);
  EXPECT_THAT(bad_cursor.err, HasSubstr("invalid_cursor: "));
  Result bad_limit = RunKeel({"replay", "--server", server_, "--stream", "tenants", "--limit", "0"});
  EXPECT_EQ(bad_limit.code, cli::kExitFailure);
  EXPECT_THAT(bad_limit.err, HasSubstr("invalid_argument: "));
  EXPECT_EQ(RunKeel({"replay", "--server", server_}).code, cli::kExitUsage);
  EXPECT_EQ(RunKeel({"replay", "--server", server_, "--stream", "s", "--limit", "x"}).code,
            cli::kExitUsage);
}

TEST_F(CliCommandsTest, TailPrintsEventsAndExitsAfterCount) {
  PublishN("tail", 4);
  Result r = RunKeel({"tail", "--server", server_, "--stream", "tail", "--after", "earliest",
                      "--count", "3"});
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  EXPECT_EQ(SequencesOf(JsonLines(r.out)), Range(1, 3));
}

TEST_F(CliCommandsTest, TailFollowsLiveEventsFromLatest) {
  PublishN("live", 2);
  Result r;
  std::atomic<bool> done{false};
  std::thread tail([&] {
    r = RunKeel({"tail", "--server", server_, "--stream", "live", "--count", "2"});
    done = true;
  });
  // Publish until tail has seen two events: it starts at the head, whenever
  // it connected, and sees only what came after.
  auto http = daemon_.NewClient();
  const absl::Time deadline = absl::Now() + kWait;
  while (!done.load() && absl::Now() < deadline) {
    ASSERT_OK(Publish(*http, "live", "cli.test", "{}").status());
    absl::SleepFor(absl::Milliseconds(20));
  }
  tail.join();
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  std::vector<uint64_t> sequences = SequencesOf(JsonLines(r.out));
  ASSERT_EQ(sequences.size(), 2u);
  EXPECT_GE(sequences[0], 3u) << "tail from latest printed an old event";
  EXPECT_EQ(sequences[1], sequences[0] + 1);
}

TEST_F(CliCommandsTest, TailResumesAcrossADaemonRestart) {
  PublishN("restart", 5);
  Result r;
  std::thread tail([&] {
    r = RunKeel({"tail", "--server", server_, "--stream", "restart", "--after", "earliest",
                 "--count", "10"});
  });
  // Restart once tail is connected (and has the first five events queued or read).
  const absl::Time deadline = absl::Now() + kWait;
  while (daemon_.metrics().Render().find("\nkeel_sse_connections 1\n") == std::string::npos &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  ASSERT_OK(daemon_.Restart());
  PublishN("restart", 5);
  tail.join();
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  EXPECT_EQ(SequencesOf(JsonLines(r.out)), Range(1, 10));
  EXPECT_THAT(r.err, HasSubstr("reconnecting in"));
}

TEST_F(CliCommandsTest, TailErrors) {
  Result bad = RunKeel({"tail", "--server", server_, "--stream", "s", "--after", "nope"});
  EXPECT_EQ(bad.code, cli::kExitFailure);
  EXPECT_THAT(bad.err, HasSubstr("invalid_cursor: "));
  EXPECT_EQ(RunKeel({"tail", "--server", server_}).code, cli::kExitUsage);
  EXPECT_EQ(RunKeel({"tail", "--server", server_, "--stream", "s", "--count", "0"}).code,
            cli::kExitUsage);
}

TEST(CliTailGapTest, TailReportsRetentionGapsOnStderr) {
  DaemonOptions options;
  options.driver = "memory";
  options.config.Set("max_events_per_stream", "5");
  InProcessDaemon daemon(options);
  ASSERT_OK(daemon.Start());
  auto http = daemon.NewClient();
  std::vector<PublishedEvent> published;
  for (int i = 0; i < 10; ++i) {
    ASSERT_OK_AND_ASSIGN(PublishedEvent event, Publish(*http, "ring", "t", absl::StrCat(i)));
    published.push_back(event);
  }
  Result r = RunKeel({"tail", "--server", daemon.address(), "--stream", "ring", "--after",
                      published[0].cursor, "--count", "5"});
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  EXPECT_EQ(SequencesOf(JsonLines(r.out)), Range(6, 10));
  EXPECT_THAT(r.err, HasSubstr("keel.gap: "));
  EXPECT_THAT(r.err, HasSubstr(published[0].cursor));
}

TEST_F(CliCommandsTest, StreamsListsAndShowsBounds) {
  PublishN("app.a", 1);
  PublishN("app.b", 3);
  PublishN("zzz", 1);
  Result list = RunKeel({"streams", "--server", server_, "--prefix", "app."});
  ASSERT_EQ(list.code, cli::kExitOk) << list.err;
  std::vector<json::object> infos = JsonLines(list.out);
  ASSERT_EQ(infos.size(), 2u);
  EXPECT_EQ(infos[0].at("stream").as_string(), "app.a");
  EXPECT_EQ(infos[1].at("stream").as_string(), "app.b");
  Result everything = RunKeel({"streams", "--server", server_});
  EXPECT_EQ(JsonLines(everything.out).size(), 3u);

  Result one = RunKeel({"streams", "--server", server_, "app.b"});
  ASSERT_EQ(one.code, cli::kExitOk) << one.err;
  std::vector<json::object> bounds = JsonLines(one.out);
  ASSERT_EQ(bounds.size(), 1u);
  EXPECT_EQ(bounds[0].at("lastSequence").to_number<uint64_t>(), 3u);
  EXPECT_EQ(bounds[0].at("count").to_number<uint64_t>(), 3u);

  Result bad = RunKeel({"streams", "--server", server_, "bad name"});
  EXPECT_EQ(bad.code, cli::kExitFailure);
  EXPECT_THAT(bad.err, HasSubstr("invalid_argument: "));
  EXPECT_EQ(RunKeel({"streams", "--server", server_, "--prefix", "a", "app.b"}).code,
            cli::kExitUsage);
}

TEST_F(CliCommandsTest, StreamsDeleteRemovesTheStream) {
  PublishN("app.gone", 2);
  PublishN("app.kept", 1);
  Result deleted = RunKeel({"streams", "--server", server_, "delete", "app.gone"});
  ASSERT_EQ(deleted.code, cli::kExitOk) << deleted.err;
  std::vector<json::object> report = JsonLines(deleted.out);
  ASSERT_EQ(report.size(), 1u);
  EXPECT_EQ(report[0].at("events").to_number<uint64_t>(), 2u);
  std::vector<json::object> left = JsonLines(RunKeel({"streams", "--server", server_}).out);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].at("stream").as_string(), "app.kept");

  Result again = RunKeel({"streams", "--server", server_, "delete", "app.gone"});
  EXPECT_EQ(again.code, cli::kExitFailure);
  EXPECT_THAT(again.err, HasSubstr("not_found"));
  Result misspelt = RunKeel({"streams", "--server", server_, "remove", "app.kept"});
  EXPECT_EQ(misspelt.code, cli::kExitUsage);
  EXPECT_EQ(JsonLines(RunKeel({"streams", "--server", server_}).out).size(), 1u);
}

TEST(CliDefaultsTest, ClientCommandsDefaultToLocalhost8080) {
  for (const char* command : {"publish", "replay", "tail", "streams"}) {
    Result r = RunKeel({command, "--help"});
    EXPECT_EQ(r.code, cli::kExitOk);
    EXPECT_THAT(r.out, HasSubstr("127.0.0.1:8080")) << command;
  }
}

}  // namespace
TEST_F(CliCommandsTest, DeclareSetsAPolicyAndReportsDrift) {
  Result declared = RunKeel({"declare", "--server", server_, "--stream", "capped", "--policy",
                             "max_events=3 dedupe_window=5m"});
  ASSERT_EQ(declared.code, cli::kExitOk) << declared.err;
  EXPECT_EQ(JsonLines(declared.out).at(0).at("policy").at("retention").at("maxEvents"), 3);
  ASSERT_OK_AND_ASSIGN(StreamPolicy policy, daemon_.bus().PolicyOf("capped"));
  EXPECT_EQ(policy.dedupe_window, absl::Minutes(5));

  Result again = RunKeel({"declare", "--server", server_, "--stream", "capped", "--policy",
                          "max_events=3 dedupe_window=5m"});
  EXPECT_EQ(again.code, cli::kExitOk) << again.err;
  Result drift = RunKeel({"declare", "--server", server_, "--stream", "capped", "--policy",
                          "max_events=4 dedupe_window=5m"});
  EXPECT_EQ(drift.code, cli::kExitFailure);
  EXPECT_THAT(drift.err, HasSubstr("resource_drift: "));
  EXPECT_THAT(drift.err, HasSubstr("max_events"));
  Result bad = RunKeel({"declare", "--server", server_, "--stream", "x", "--policy", "max_evnts=1"});
  EXPECT_EQ(bad.code, cli::kExitUsage);
  EXPECT_THAT(bad.err, HasSubstr("max_evnts"));
}

TEST_F(CliCommandsTest, PublishWithExpectedLastSequenceAndPartitionKey) {
  Result first = RunKeel({"publish", "--server", server_, "--stream", "occ", "--type", "t",
                          "--data", "1", "--expected-last-sequence", "0"});
  ASSERT_EQ(first.code, cli::kExitOk) << first.err;
  Result stale = RunKeel({"publish", "--server", server_, "--stream", "occ", "--type", "t",
                          "--data", "2", "--expected-last-sequence", "0"});
  EXPECT_EQ(stale.code, cli::kExitFailure);
  EXPECT_THAT(stale.err, HasSubstr("conflict: "));

  ASSERT_OK(daemon_.bus().Declare("clicks", *StreamPolicy::Parse("partitions=3")));
  Result routed = RunKeel({"publish", "--server", server_, "--stream", "clicks", "--type",
                           "click", "--data", "1", "--partition-key", "user-7"});
  ASSERT_EQ(routed.code, cli::kExitOk) << routed.err;
  EXPECT_EQ(JsonLines(routed.out).at(0).at("stream").as_string(),
            PartitionStream("clicks", PartitionOf("user-7", 3)));
}

TEST_F(CliCommandsTest, ReplayFromATime) {
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(RunKeel({"publish", "--server", server_, "--stream", "timed", "--type", "t",
                       "--data", absl::StrCat(i)}).code,
              cli::kExitOk);
  }
  ASSERT_OK_AND_ASSIGN(ReplayPage page, daemon_.bus().replayer()->Replay(AllOf("timed")));
  const std::string last_time = absl::FormatTime(absl::RFC3339_full, page.events.back().time,
                                                 absl::UTCTimeZone());
  Result replay = RunKeel({"replay", "--server", server_, "--stream", "timed", "--after-time",
                           last_time, "--all"});
  ASSERT_EQ(replay.code, cli::kExitOk) << replay.err;
  std::vector<json::object> events = JsonLines(replay.out);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().at("sequence").to_number<uint64_t>(), 3u);
  for (const json::object& event : events) {
    absl::Time time;
    std::string error;
    ASSERT_TRUE(absl::ParseTime(absl::RFC3339_full, std::string(event.at("time").as_string()),
                                &time, &error))
        << error;
    EXPECT_GE(time, page.events.back().time) << "an event published before --after-time";
  }
  Result both = RunKeel({"replay", "--server", server_, "--stream", "timed", "--after-time",
                         last_time, "--after", "earliest"});
  EXPECT_EQ(both.code, cli::kExitUsage);

  const std::string first_time = absl::FormatTime(absl::RFC3339_full, page.events.front().time,
                                                  absl::UTCTimeZone());
  Result tail = RunKeel({"tail", "--server", server_, "--stream", "timed", "--after-time",
                         first_time, "--count", "3"});
  ASSERT_EQ(tail.code, cli::kExitOk) << tail.err;
  EXPECT_THAT(SequencesOf(JsonLines(tail.out)), ElementsAre(1, 2, 3));
}

}  // namespace keel::daemon_test
