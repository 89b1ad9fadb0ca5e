// An export as DuckDB reads it: `read_json_auto('DIR/**/*.jsonl')` counts
// what a Keel replay counts, per stream and day; the hive directories are
// columns a filter prunes by; retention gaps are rows of their own.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
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
#include "keel/core/collections.h"
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
  std::string Glob(const std::string& suffix = ".jsonl") const {
    return absl::StrCat("read_json_auto('", lake(), "/**/*", suffix, "')");
  }

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

  void ExportAll(ExportCompression compression = ExportCompression::kNone) {
    ASSERT_OK_AND_ASSIGN(push::StreamPattern everything, push::StreamPattern::Parse("*"));
    ExportOptions options;
    options.max_file_events = 25;
    options.compression = compression;
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

  // Events per (stream, year, month, day) as DuckDB counts the files of
  // `suffix`.
  std::map<Day, int64_t> DuckDbCounts(const std::string& suffix) {
    absl::StatusOr<boost::json::array> rows =
        testing::DuckDbQuery(absl::StrCat("SELECT stream, year, month, day, count(*) AS n FROM ",
                                          Glob(suffix), " GROUP BY ALL ORDER BY ALL"));
    EXPECT_OK(rows.status());
    std::map<Day, int64_t> counted;
    for (const boost::json::value& row : rows.value_or(boost::json::array{})) {
      const boost::json::object& o = row.as_object();
      int64_t n = 0;
      EXPECT_TRUE(absl::SimpleAtoi(std::string(o.at("n").as_string()), &n));
      counted[{std::string(o.at("stream").as_string()), std::string(o.at("year").as_string()),
               std::string(o.at("month").as_string()), std::string(o.at("day").as_string())}] = n;
    }
    return counted;
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
  EXPECT_EQ(DuckDbCounts(".jsonl"), expected);

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

TEST_F(ExportDuckDbTest, CompressedFilesCountTheSame) {
  Publish("orders", 400);
  Publish("notes", 30, /*json=*/false);
  ExportAll(ExportCompression::kZstd);
  const std::map<Day, int64_t> expected = ReplayCounts();
  EXPECT_EQ(DuckDbCounts(".jsonl.zst"), expected);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(lake())) {
    EXPECT_NE(entry.path().extension(), ".jsonl") << entry.path();  // None plain beside them.
  }
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

// The events.do time-travel queries over an exported collection: every
// version of a document in order, and the document as of a time, as
// DuckDB reads them from the change events, equal History and GetAtTime.
class CollectionHistoryDuckDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LinkBuiltinDrivers();
    DriverContext context;
    context.clock = &clock_;
    ASSERT_OK_AND_ASSIGN(
        bus_,
        CreateBus("durable",
                  Config{{"store", "leveldb"}, {"store.path", dir_.Sub("store")}, {"sync", "none"}},
                  context));
    ASSERT_NE(bus_->collections(), nullptr);
  }

  std::string Scan() const {
    return absl::StrCat("read_json_auto('", dir_.Sub("lake"), "/stream=users/**/*.jsonl')");
  }

  testing::TempDir dir_;
  ManualClock clock_{
      absl::FromCivil(absl::CivilSecond(2026, 12, 5, 20, 0, 0), absl::UTCTimeZone())};
  std::unique_ptr<EventBus> bus_;
};

TEST_F(CollectionHistoryDuckDbTest, EveryVersionInOrderAndTheDocumentAsOfATime) {
  Collections& users = *bus_->collections();
  std::mt19937 random(7);
  for (int i = 0; i < 300; ++i) {
    const std::string id = absl::StrCat("u", random() % 5);
    if (random() % 10 == 0) {
      if (!users.Delete("users", id, {}).ok()) continue;  // Not there: nothing stored.
    } else {
      ASSERT_OK(users.Put("users", id, absl::StrCat("{\"n\":", i, "}"), {}).status());
    }
    clock_.Advance(absl::Minutes(13));  // Across three days.
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<BusExportSource> source, BusExportSource::Create(*bus_));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<FsColdStore> target, FsColdStore::Open(dir_.Sub("lake")));
  ASSERT_OK_AND_ASSIGN(push::StreamPattern users_only, push::StreamPattern::Parse("users"));
  ExportOptions options;
  options.max_file_events = 40;
  ASSERT_OK_AND_ASSIGN(ExportPassReport report,
                       RunExportPass(*source, *target, users_only, options, clock_));
  ASSERT_TRUE(report.failures.empty()) << report.failures.front().status;

  ASSERT_OK_AND_ASSIGN(std::vector<Document> history, users.History("users", "u3"));
  ASSERT_GT(history.size(), 20u);
  ASSERT_OK_AND_ASSIGN(
      boost::json::array rows,
      testing::DuckDbQuery(
          absl::StrCat("SELECT data.version AS version, type, data.after.n AS n, sequence FROM ",
                       Scan(), " WHERE data.id = 'u3' ORDER BY data.version")));
  ASSERT_EQ(rows.size(), history.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const boost::json::object& row = rows[i].as_object();
    const Document& version = history[i];
    EXPECT_EQ(row.at("version").as_string(), absl::StrCat(version.version));
    EXPECT_EQ(row.at("sequence").as_string(), absl::StrCat(version.cursor.sequence));
    // A write after a delete inserts the document again.
    const bool absent_before = i == 0 || history[i - 1].deleted;
    EXPECT_EQ(std::string(row.at("type").as_string()), version.deleted ? "users.delete"
                                                       : absent_before ? "users.insert"
                                                                       : "users.update");
    if (version.deleted) {
      EXPECT_TRUE(row.at("n").is_null()) << boost::json::serialize(row);
    } else {
      EXPECT_EQ(absl::StrCat("{\"n\":", std::string(row.at("n").as_string()), "}"), version.body);
    }
  }

  // As of a time between writes: the last version at or before it (every
  // third version: a query is a process).
  for (size_t i = 0; i < history.size(); i += 3) {
    const Document& version = history[i];
    const absl::Time between = version.time + absl::Minutes(1);
    ASSERT_OK_AND_ASSIGN(
        boost::json::array at,
        testing::DuckDbQuery(absl::StrCat(
            "SELECT data.version AS version FROM ", Scan(), " WHERE data.id = 'u3' AND time <= '",
            absl::FormatTime("%Y-%m-%dT%H:%M:%E9SZ", between, absl::UTCTimeZone()),
            "' ORDER BY data.version DESC LIMIT 1")));
    ASSERT_EQ(at.size(), 1u);
    absl::StatusOr<Document> expected = users.GetAtTime("users", "u3", between);
    const uint64_t expected_version = expected.ok() ? expected->version : version.version;
    EXPECT_TRUE(expected.ok() || version.deleted) << expected.status();
    EXPECT_EQ(at[0].at("version").as_string(), absl::StrCat(expected_version));
  }
}

}  // namespace
}  // namespace keel::lakehouse
