// A daemon whose durable bus has a cold store (rfcs/0008-cold-segments.md):
// the trimmer tiers a stream past its hot window, and what a user sees of
// it — GET /v1/streams/{s} (hot and cold bounds), `keel streams`, /metrics
// (the tier's figures) — and that replay still reaches every event. A
// daemon without a cold store shows none of it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "keel/core/status_macros.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/cmd/run_keel.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

using ::keel::testing::RunKeel;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr uint64_t kEvents = 300;
constexpr uint64_t kHotEvents = 100;
constexpr uint64_t kSegmentEvents = 50;

// 300 events in one POST: [1, 300].
std::string EventsBody() {
  std::string body = "[";
  for (uint64_t i = 1; i <= kEvents; ++i) {
    absl::StrAppend(&body, i > 1 ? "," : "", R"({"type":"t","data":{"n":)", i, "}}");
  }
  return body + "]";
}

absl::StatusOr<json::object> StreamJson(client::HttpClient& http, const std::string& stream) {
  KEEL_ASSIGN_OR_RETURN(json::value value,
                        GetJson(http, client::BuildTarget({"v1", "streams", stream})));
  return value.as_object();
}

// Polls the stream until the trimmer has moved everything past the hot
// window to cold (its hot window starts at `hot_first`), or kWait passed.
absl::StatusOr<json::object> AwaitTiered(client::HttpClient& http, const std::string& stream,
                                         uint64_t hot_first) {
  const absl::Time deadline = absl::Now() + kWait;
  while (true) {
    KEEL_ASSIGN_OR_RETURN(json::object info, StreamJson(http, stream));
    const json::value* hot = info.if_contains("hot");
    if ((hot != nullptr && hot->at("firstSequence").to_number<uint64_t>() >= hot_first) ||
        absl::Now() >= deadline) {
      return info;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

std::string MetricsText(client::HttpClient& http) {
  absl::StatusOr<client::ClientResponse> response = http.Get("/metrics");
  EXPECT_TRUE(response.ok()) << response.status();
  return response.ok() ? response->body : "";
}

class ColdTierDaemonTest : public ::testing::Test {
 protected:
  static DaemonOptions ColdOptions(const std::string& cold_dir) {
    DaemonOptions options;
    options.config.Set("cold_store", "fs:" + cold_dir);
    options.config.Set("cold_segment_events", absl::StrCat(kSegmentEvents));
    return options;
  }

  void SetUp() override {
    ASSERT_OK(daemon_.Start());
    http_ = daemon_.NewClient();
    ASSERT_OK_AND_ASSIGN(
        client::ClientResponse declared,
        http_->Request("PUT", "/v1/streams/orders",
                       absl::StrCat(R"({"hotRetention":{"maxEvents":)", kHotEvents, "}}"),
                       {{"Content-Type", "application/json"}}));
    ASSERT_EQ(declared.status, 200) << declared.body;
    ASSERT_OK_AND_ASSIGN(client::ClientResponse posted, PostEvents(*http_, "orders", EventsBody()));
    ASSERT_EQ(posted.status, 201) << posted.body;
  }

  ::keel::testing::TempDir cold_dir_;
  InProcessDaemon daemon_{ColdOptions(cold_dir_.Sub("cold"))};
  std::unique_ptr<client::HttpClient> http_;
};

TEST_F(ColdTierDaemonTest, StreamInfoShowsHotAndColdBounds) {
  ASSERT_OK_AND_ASSIGN(json::object info, AwaitTiered(*http_, "orders", kEvents - kHotEvents + 1));
  // The stream's bounds still cover both tiers.
  EXPECT_EQ(info.at("firstSequence").to_number<uint64_t>(), 1u);
  EXPECT_EQ(info.at("lastSequence").to_number<uint64_t>(), kEvents);
  EXPECT_EQ(info.at("count").to_number<uint64_t>(), kEvents);
  ASSERT_TRUE(info.contains("hot")) << json::serialize(info);
  EXPECT_EQ(info.at("hot").at("firstSequence").to_number<uint64_t>(), 201u);
  EXPECT_EQ(info.at("hot").at("count").to_number<uint64_t>(), kHotEvents);
  ASSERT_TRUE(info.contains("cold")) << json::serialize(info);
  const json::value& cold = info.at("cold");
  EXPECT_EQ(cold.at("firstSequence").to_number<uint64_t>(), 1u);
  EXPECT_EQ(cold.at("count").to_number<uint64_t>(), kEvents - kHotEvents);
  EXPECT_EQ(cold.at("segments").to_number<uint64_t>(), (kEvents - kHotEvents) / kSegmentEvents);
  EXPECT_GT(cold.at("bytes").to_number<uint64_t>(), 0u);
  EXPECT_EQ(info.at("policy").at("hotRetention").at("maxEvents").to_number<uint64_t>(), kHotEvents);
}

TEST_F(ColdTierDaemonTest, KeelStreamsPrintsTheTiers) {
  ASSERT_OK_AND_ASSIGN(json::object info, AwaitTiered(*http_, "orders", kEvents - kHotEvents + 1));
  ASSERT_TRUE(info.contains("cold")) << json::serialize(info);

  const auto one = RunKeel({"streams", "--server", daemon_.address(), "orders"});
  ASSERT_EQ(one.code, 0) << one.err;
  boost::system::error_code ec;
  json::value shown = json::parse(one.out, ec);
  ASSERT_FALSE(ec) << one.out;
  EXPECT_EQ(shown.at("hot").at("firstSequence").to_number<uint64_t>(), 201u);
  EXPECT_EQ(shown.at("cold").at("segments").to_number<uint64_t>(), 4u);

  // The listing says the same for each stream; a stream with nothing cold
  // has a hot window only.
  ASSERT_OK(Publish(*http_, "fresh", "t", "{}").status());
  const auto listed = RunKeel({"streams", "--server", daemon_.address()});
  ASSERT_EQ(listed.code, 0) << listed.err;
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(listed.out, '\n', absl::SkipEmpty())) {
    lines.emplace_back(line);
  }
  ASSERT_EQ(lines.size(), 2u) << listed.out;
  json::value fresh = json::parse(lines[0], ec);
  ASSERT_FALSE(ec) << lines[0];
  EXPECT_EQ(fresh.at("stream").as_string(), "fresh");
  EXPECT_EQ(fresh.at("hot").at("firstSequence").to_number<uint64_t>(), 1u);
  EXPECT_EQ(fresh.at("hot").at("count").to_number<uint64_t>(), 1u);
  EXPECT_FALSE(fresh.as_object().contains("cold")) << lines[0];
  json::value orders = json::parse(lines[1], ec);
  ASSERT_FALSE(ec) << lines[1];
  EXPECT_EQ(orders.at("cold").at("firstSequence").to_number<uint64_t>(), 1u);
  EXPECT_EQ(orders.at("cold").at("bytes"), shown.at("cold").at("bytes"));
}

TEST_F(ColdTierDaemonTest, MetricsCountTheColdTier) {
  ASSERT_OK_AND_ASSIGN(json::object info, AwaitTiered(*http_, "orders", kEvents - kHotEvents + 1));
  ASSERT_TRUE(info.contains("cold")) << json::serialize(info);
  std::string text = MetricsText(*http_);
  EXPECT_EQ(MetricValue(text, "keel_cold_segments"), 4);
  EXPECT_EQ(MetricValue(text, "keel_cold_bytes"),
            static_cast<double>(info.at("cold").at("bytes").to_number<uint64_t>()));
  EXPECT_EQ(MetricValue(text, "keel_cold_uploads_total"), 4);
  EXPECT_EQ(MetricValue(text, "keel_cold_upload_failures_total"), 0);
  EXPECT_EQ(MetricValue(text, "keel_cold_expired_segments_total"), 0);
  EXPECT_EQ(MetricValue(text, "keel_cold_paused"), 0);
  const double reads_before = MetricValue(text, "keel_cold_reads_total");
  EXPECT_GE(reads_before, 0);

  // A replay from the start reads every event, the cold ones from segments.
  ASSERT_OK_AND_ASSIGN(std::vector<json::object> events, ReplayAll(*http_, "orders"));
  ASSERT_EQ(events.size(), kEvents);
  for (uint64_t i = 0; i < kEvents; ++i) {
    ASSERT_EQ(events[i].at("sequence").to_number<uint64_t>(), i + 1);
  }
  text = MetricsText(*http_);
  EXPECT_GE(MetricValue(text, "keel_cold_reads_total"), reads_before + 4);
}

TEST(NoColdTierDaemonTest, StreamInfoAndMetricsHaveNoTiers) {
  InProcessDaemon daemon;
  ASSERT_OK(daemon.Start());
  std::unique_ptr<client::HttpClient> http = daemon.NewClient();
  ASSERT_OK(Publish(*http, "orders", "t", "{}").status());
  ASSERT_OK_AND_ASSIGN(json::object info, StreamJson(*http, "orders"));
  EXPECT_FALSE(info.contains("hot")) << json::serialize(info);
  EXPECT_FALSE(info.contains("cold")) << json::serialize(info);
  const std::string text = MetricsText(*http);
  EXPECT_THAT(text, Not(HasSubstr("keel_cold_")));
  EXPECT_THAT(text, HasSubstr("keel_published_events_total"));
}

}  // namespace
}  // namespace keel::daemon_test
