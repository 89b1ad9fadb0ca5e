// An export as DuckDB reads it: `read_json_auto('DIR/**/*.jsonl')` counts
// what a Keel replay counts, per stream and day; the hive directories are
// columns a filter prunes by; retention gaps are rows of their own.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "keel/cmd/keel/export/bus_export_source.h"
#include "keel/cmd/keel/export/export_layout.h"
#include "keel/cmd/keel/export/export_pass.h"
#include "keel/coldstore/fs/fs_cold_store.h"
#include "keel/core/clock.h"
#include "keel/core/driver_factory.h"
#include "keel/drivers/builtin_drivers.h"
#include "keel/tests/cmd/export/duckdb_query.h"
#include "keel/tests/testing/status_matchers.h"
#include "keel/tests/testing/temp_dir.h"

namespace keel::lakehouse {
namespace {

using Day = std::tuple<std::string, std::string, std::string, std::string>;  // stream, y, m, d

class ExportDuckDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LinkBuiltinDrivers();
    DriverContext context;
    context.clock = &clock_;
    ASSERT_OK_AND_ASSIGN(bus_, CreateBus("memory", Config(), context));
    ASSERT_OK_AND_ASSIGN(source_, BusExportSource::Create(*bus_));
    ASSERT_OK_AND_ASSIGN(target_, FsColdStore::Open(lake()));
  }

  std::string lake() const { return dir_.Sub("lake"); }
  std::string Glob() const { return absl::StrCat("read_json_auto('", lake(), "/**/*.jsonl')"); }

  void Publish(const std::string& stream, int n, bool json = true) {
    for (int i = 0; i < n; ++i) {
      Event event;
      event.stream = stream;
      event.type = json ? "order.created" : "note";
      event.content_type = json ? "application/json" : "text/plain";
      event.payload = json ? absl::StrCat("{\"n\":", i, ",\"tags\":[\"a\"]}") : "plain words";
      ASSERT_OK(bus_->Publish(std::move(event)).status());
      clock_.Advance(absl::Minutes(7));
    }
  }

  void ExportAll() {
    ASSERT_OK_AND_ASSIGN(push::StreamPattern everything, push::StreamPattern::Parse("*"));
    ExportOptions options;
    options.max_file_events = 25;
    ASSERT_OK_AND_ASSIGN(ExportPassReport report,
                         RunExportPass(*source_, *target_, everything, options, clock_));
    ASSERT_TRUE(report.failures.empty()) << report.failures.front().status;
  }

  // Events per (stream, year, month, day) as a Keel replay reads them.
  std::map<Day, int64_t> ReplayCounts() {
    std::map<Day, int64_t> counts;
    for (const std::string stream : {"orders", "notes"}) {
      ReplayRequest request;
      request.stream = stream;
      request.limit = kMaxReplayLimit;
      absl::StatusOr<ReplayPage> page = bus_->replayer()->Replay(request);
      EXPECT_OK(page.status());
      for (const Event& event : page->events) {
        const absl::CivilDay day = ExportDayOf(event.time);
        ++counts[{stream, absl::StrFormat("%04d", day.year()), absl::StrFormat("%02d", day.month()),
                  absl::StrFormat("%02d", day.day())}];
      }
    }
    return counts;
  }

  testing::TempDir dir_;
  ManualClock clock_{
      absl::FromCivil(absl::CivilSecond(2026, 12, 5, 20, 0, 0), absl::UTCTimeZone())};
  std::unique_ptr<EventBus> bus_;
  std::unique_ptr<BusExportSource> source_;
  std::unique_ptr<FsColdStore> target_;
};

TEST_F(ExportDuckDbTest, CountsPerStreamAndDayAreAReplaysCounts) {
  Publish("orders", 400);  // 20:00 on the 5th to about 18:40 on the 7th.
  Publish("notes", 30, /*json=*/false);
  ExportAll();
  const std::map<Day, int64_t> expected = ReplayCounts();
  ASSERT_EQ(expected.size(), 4u);  // orders on three days, notes on one.
  ASSERT_OK_AND_ASSIGN(
      boost::json::array rows,
      testing::DuckDbQuery(absl::StrCat("SELECT stream, year, month, day, count(*) AS n FROM ",
                                        Glob(), " GROUP BY ALL ORDER BY ALL")));
  std::map<Day, int64_t> counted;
  for (const boost::json::value& row : rows) {
    const boost::json::object& o = row.as_object();
    int64_t n = 0;
    ASSERT_TRUE(absl::SimpleAtoi(std::string(o.at("n").as_string()), &n));
    counted[{std::string(o.at("stream").as_string()), std::string(o.at("year").as_string()),
             std::string(o.at("month").as_string()), std::string(o.at("day").as_string())}] = n;
  }
  EXPECT_EQ(counted, expected);

  // Each stream's sequences, all of them once.
  ASSERT_OK_AND_ASSIGN(int64_t distinct, testing::DuckDbCount(absl::StrCat(
                                             "SELECT count(DISTINCT (stream, sequence)) AS n FROM ",
                                             Glob(), " WHERE sequence BETWEEN 1 AND 400")));
  EXPECT_EQ(distinct, 430);
  // The JSON data is a column of its own; other payloads are base64.
  ASSERT_OK_AND_ASSIGN(int64_t tagged,
                       testing::DuckDbCount(absl::StrCat("SELECT count(*) AS n FROM ", Glob(),
                                                         " WHERE data.tags[1] = 'a'")));
  EXPECT_EQ(tagged, 400);
  ASSERT_OK_AND_ASSIGN(int64_t plain, testing::DuckDbCount(absl::StrCat(
                                          "SELECT count(*) AS n FROM ", Glob(),
                                          " WHERE from_base64(dataBase64) = 'plain words'::BLOB")));
  EXPECT_EQ(plain, 30);
}

TEST_F(ExportDuckDbTest, AFilterOnTheDayReadsOnlyThatDaysFiles) {
  Publish("orders", 400);
  ExportAll();
  const int64_t on_the_6th = ReplayCounts()[{"orders", "2026", "12", "06"}];
  ASSERT_GT(on_the_6th, 0);
  // A file no export wrote, torn, on another day: a query that reads it fails.
  const std::filesystem::path torn =
      std::filesystem::path(lake()) / "stream=orders/year=2026/month=12/day=07/torn.jsonl";
  std::ofstream(torn) << "{\"stream\":\"orders\",\"sequ";
  // With the columns given (read_json_auto would sample files of every
  // day to infer them), a filter on the partitions reads only the 6th's.
  const std::string scan =
      absl::StrCat("read_json('", lake(), "/**/*.jsonl', format = 'newline_delimited', ",
                   "hive_partitioning = true, columns = {stream: 'VARCHAR', sequence: 'UBIGINT'})");
  EXPECT_FALSE(testing::DuckDbCount(absl::StrCat("SELECT count(*) AS n FROM ", scan)).ok());
  ASSERT_OK_AND_ASSIGN(
      int64_t counted,
      testing::DuckDbCount(absl::StrCat("SELECT count(*) AS n FROM ", scan,
                                        " WHERE year = '2026' AND month = '12' AND day = '06'")));
  EXPECT_EQ(counted, on_the_6th);
}

TEST_F(ExportDuckDbTest, ARetentionGapIsARowOfItsOwnOutsideTheEvents) {
  ASSERT_OK_AND_ASSIGN(StreamPolicy policy, StreamPolicy::Parse("max_events=10"));
  ASSERT_OK(bus_->Declare("orders", policy));
  Publish("orders", 5);
  ExportAll();
  Publish("orders", 20);  // 6..25; retention keeps 16..25.
  ASSERT_OK(bus_->Trim(1000).status());
  ExportAll();
  ASSERT_OK_AND_ASSIGN(int64_t events,
                       testing::DuckDbCount(absl::StrCat("SELECT count(*) AS n FROM ", Glob())));
  EXPECT_EQ(events, 15);  // 1..5 and 16..25.
  ASSERT_OK_AND_ASSIGN(
      boost::json::array gaps,
      testing::DuckDbQuery(absl::StrCat("SELECT stream, fromSequence, toSequence, missed FROM "
                                        "read_json_auto('",
                                        lake(), "/_gaps/**/*.json')")));
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(boost::json::serialize(gaps[0]),
            R"({"stream":"orders","fromSequence":"6","toSequence":"15","missed":"10"})");
}

}  // namespace
}  // namespace keel::lakehouse
