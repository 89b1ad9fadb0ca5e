// Lakehouse exports on an in-process bus: files by day and size, named
// after their sequences; passes that go on after their checkpoint; an
// interrupted pass finished without a duplicate; a clash refused; retention
// gaps recorded.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "keel/cmd/keel/export/bus_export_source.h"
#include "keel/cmd/keel/export/export_layout.h"
#include "keel/cmd/keel/export/export_pass.h"
#include "keel/cmd/keel/export/stream_export.h"
#include "keel/cmd/keel/export/zstd_codec.h"
#include "keel/coldstore/fs/fs_cold_store.h"
#include "keel/core/clock.h"
#include "keel/core/driver_factory.h"
#include "keel/drivers/builtin_drivers.h"
#include "keel/tests/testing/status_matchers.h"
#include "keel/tests/testing/temp_dir.h"

namespace keel::lakehouse {
namespace {

using ::keel::testing::HasErrorKind;
using ::keel::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// Noon UTC, so that a few seconds either way stay on the same day.
const absl::Time kDayOne =
    absl::FromCivil(absl::CivilSecond(2026, 12, 5, 12, 0, 0), absl::UTCTimeZone());

// A source whose next SetCheckpoint calls fail: a crash between linking a
// file and recording it.
class CheckpointFailingSource : public ExportSource {
 public:
  explicit CheckpointFailingSource(ExportSource& inner) : inner_(inner) {}
  absl::StatusOr<std::vector<std::string>> ListStreams(absl::string_view prefix) override {
    return inner_.ListStreams(prefix);
  }
  absl::StatusOr<ExportPage> Read(absl::string_view stream, const std::optional<std::string>& after,
                                  size_t limit) override {
    return inner_.Read(stream, after, limit);
  }
  absl::StatusOr<std::optional<std::string>> Checkpoint(absl::string_view stream,
                                                        absl::string_view group) override {
    return inner_.Checkpoint(stream, group);
  }
  absl::Status SetCheckpoint(absl::string_view stream, absl::string_view group,
                             absl::string_view cursor) override {
    if (failures_ > 0) {
      --failures_;
      return absl::UnavailableError("killed before the checkpoint");
    }
    return inner_.SetCheckpoint(stream, group, cursor);
  }
  int failures_ = 1;

 private:
  ExportSource& inner_;
};

class ExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LinkBuiltinDrivers();
    DriverContext context;
    context.clock = &clock_;
    absl::StatusOr<std::unique_ptr<EventBus>> bus = CreateBus("memory", Config(), context);
    ASSERT_OK(bus.status());
    bus_ = *std::move(bus);
    absl::StatusOr<std::unique_ptr<BusExportSource>> source = BusExportSource::Create(*bus_);
    ASSERT_OK(source.status());
    source_ = *std::move(source);
    target_ = OpenTarget("lake");
  }

  std::unique_ptr<FsColdStore> OpenTarget(const std::string& name) {
    absl::StatusOr<std::unique_ptr<FsColdStore>> store = FsColdStore::Open(dir_.Sub(name));
    EXPECT_OK(store.status());
    return store.ok() ? *std::move(store) : nullptr;
  }

  void PublishN(const std::string& stream, int n) {
    for (int i = 0; i < n; ++i) {
      Event event;
      event.stream = stream;
      event.type = "order.created";
      event.content_type = "application/json";
      event.payload = absl::StrCat("{\"n\":", ++published_, "}");
      ASSERT_OK(bus_->Publish(std::move(event)).status());
    }
  }

  absl::StatusOr<StreamExportReport> Export(const std::string& stream, ColdStore& target,
                                            ExportSource* source = nullptr) {
    return ExportStream(source ? *source : *source_, target, stream, options_, clock_);
  }

  // Every event file of `target` by name, with its bytes.
  std::map<std::string, std::string> Files(ColdStore& target) {
    std::map<std::string, std::string> files;
    absl::StatusOr<std::vector<ObjectInfo>> objects = target.List("");
    EXPECT_OK(objects.status());
    for (const ObjectInfo& object : objects.value_or(std::vector<ObjectInfo>{})) {
      files[object.name] = target.Read(object.name).value_or("<unreadable>");
    }
    return files;
  }

  std::string EventFile(absl::CivilDay day, uint64_t first, uint64_t last,
                        const std::string& stream = "orders",
                        ExportCompression compression = ExportCompression::kNone) {
    return EventFileName(stream, day, first, last, compression);
  }

  testing::TempDir dir_;
  ManualClock clock_{kDayOne};
  std::unique_ptr<EventBus> bus_;
  std::unique_ptr<BusExportSource> source_;
  std::unique_ptr<FsColdStore> target_;
  ExportOptions options_;
  int published_ = 0;
};

TEST_F(ExportTest, WritesEachDayToAFileNamedAfterItsSequences) {
  PublishN("orders", 3);
  clock_.Advance(absl::Hours(24));
  PublishN("orders", 2);
  ASSERT_OK_AND_ASSIGN(StreamExportReport report, Export("orders", *target_));
  EXPECT_EQ(report.files_written, 2u);
  EXPECT_EQ(report.events, 5u);
  EXPECT_EQ(report.exported_through, 5u);
  EXPECT_EQ(report.lag, 0u);
  std::map<std::string, std::string> files = Files(*target_);
  ASSERT_EQ(files.size(), 2u);
  const std::string first_day = EventFile(absl::CivilDay(2026, 12, 5), 1, 3);
  EXPECT_EQ(first_day,
            "stream=orders/year=2026/month=12/day=05/"
            "orders-00000000000000000001-00000000000000000003.jsonl");
  ASSERT_TRUE(files.count(first_day));
  ASSERT_TRUE(files.count(EventFile(absl::CivilDay(2026, 12, 6), 4, 5)));
  // One event object per line, as the HTTP API writes it, in order.
  std::vector<std::string> lines = absl::StrSplit(files[first_day], '\n');
  ASSERT_EQ(lines.size(), 4u);  // Three rows and the final newline's empty rest.
  EXPECT_EQ(lines[3], "");
  for (int i = 0; i < 3; ++i) {
    boost::json::object row = boost::json::parse(lines[i]).as_object();
    EXPECT_EQ(row.at("sequence").to_number<uint64_t>(), static_cast<uint64_t>(i + 1));
    EXPECT_EQ(row.at("stream").as_string(), "orders");
    EXPECT_EQ(row.at("data").at("n").to_number<int>(), i + 1);
    EXPECT_EQ(row.at("time").as_string(), "2026-12-05T12:00:00.000000000Z");
    EXPECT_TRUE(row.contains("cursor") && row.contains("id"));
  }
}

TEST_F(ExportTest, APassGoesOnAfterTheLastFileItLinked) {
  PublishN("orders", 3);
  ASSERT_OK(Export("orders", *target_).status());
  ASSERT_OK_AND_ASSIGN(StreamExportReport idle, Export("orders", *target_));
  EXPECT_EQ(idle.files_written, 0u);
  PublishN("orders", 2);
  ASSERT_OK_AND_ASSIGN(StreamExportReport report, Export("orders", *target_));
  EXPECT_EQ(report.files_written, 1u);
  EXPECT_EQ(report.events, 2u);
  const absl::CivilDay day(2026, 12, 5);
  std::map<std::string, std::string> files = Files(*target_);
  EXPECT_EQ(files.size(), 2u);
  EXPECT_TRUE(files.count(EventFile(day, 1, 3)));
  EXPECT_TRUE(files.count(EventFile(day, 4, 5)));
  // The checkpoint is the export's consumer group, with its lag.
  ASSERT_OK_AND_ASSIGN(GroupInfo group, bus_->groups()->Describe("orders", "export.default"));
  EXPECT_EQ(group.cursor.sequence, 5u);
  EXPECT_EQ(group.lag, 0u);
}

TEST_F(ExportTest, CutsFilesAtTheEventBound) {
  options_.max_file_events = 4;
  PublishN("orders", 10);
  ASSERT_OK(Export("orders", *target_).status());
  const absl::CivilDay day(2026, 12, 5);
  std::map<std::string, std::string> files = Files(*target_);
  EXPECT_EQ(files.size(), 3u);
  EXPECT_TRUE(files.count(EventFile(day, 1, 4)));
  EXPECT_TRUE(files.count(EventFile(day, 5, 8)));
  EXPECT_TRUE(files.count(EventFile(day, 9, 10)));
}

TEST_F(ExportTest, APassACrashStoppedBeforeItsCheckpointIsFinishedWithoutADuplicate) {
  PublishN("orders", 5);
  CheckpointFailingSource crashing(*source_);
  EXPECT_THAT(Export("orders", *target_, &crashing), StatusIs(absl::StatusCode::kUnavailable));
  PublishN("orders", 3);  // The head moved on before the export restarted.
  ASSERT_OK_AND_ASSIGN(StreamExportReport report, Export("orders", *target_));
  EXPECT_EQ(report.files_adopted, 1u);
  EXPECT_EQ(report.files_written, 1u);
  const absl::CivilDay day(2026, 12, 5);
  std::map<std::string, std::string> files = Files(*target_);
  // 1-5 kept as linked (not 1-8 beside it), then 6-8.
  ASSERT_EQ(files.size(), 2u);
  EXPECT_TRUE(files.count(EventFile(day, 1, 5)));
  EXPECT_TRUE(files.count(EventFile(day, 6, 8)));

  // A clean export of the same events cut at the same places writes the
  // same bytes.
  std::unique_ptr<FsColdStore> clean = OpenTarget("clean");
  options_.name = "clean";
  options_.max_file_events = 5;
  ASSERT_OK(Export("orders", *clean).status());
  EXPECT_EQ(Files(*clean), files);
}

TEST_F(ExportTest, AFileOfOtherBytesInTheWayIsAnErrorAndStaysAsItWas) {
  PublishN("orders", 3);
  const std::string name = EventFile(absl::CivilDay(2026, 12, 5), 1, 3);
  ASSERT_OK(target_->PutIfAbsent(name, "not these events\n").status());
  absl::StatusOr<StreamExportReport> report = Export("orders", *target_);
  EXPECT_THAT(report, HasErrorKind(ErrorKind::kConflict));
  EXPECT_THAT(report.status().message(), HasSubstr(name));
  EXPECT_EQ(target_->Read(name).value_or(""), "not these events\n");
  EXPECT_THAT(bus_->groups()->Describe("orders", "export.default"),
              HasErrorKind(ErrorKind::kNotFound));
}

TEST_F(ExportTest, CompressedFilesHoldTheLinesAPlainExportWrites) {
  PublishN("orders", 7);
  options_.max_file_events = 4;
  ASSERT_OK(Export("orders", *target_).status());
  std::unique_ptr<FsColdStore> zstd = OpenTarget("zstd");
  options_.name = "zstd";
  options_.compression = ExportCompression::kZstd;
  ASSERT_OK_AND_ASSIGN(StreamExportReport report, Export("orders", *zstd));
  EXPECT_EQ(report.files_written, 2u);
  const absl::CivilDay day(2026, 12, 5);
  const std::map<std::string, std::string> plain = Files(*target_);
  const std::map<std::string, std::string> compressed = Files(*zstd);
  ASSERT_EQ(compressed.size(), 2u);
  for (auto [first, last] : {std::pair<uint64_t, uint64_t>{1, 4}, {5, 7}}) {
    const std::string name = EventFile(day, first, last, "orders", ExportCompression::kZstd);
    ASSERT_TRUE(compressed.count(name)) << name;
    EXPECT_NE(compressed.at(name), plain.at(EventFile(day, first, last)));
    ASSERT_OK_AND_ASSIGN(std::string lines, ZstdDecompress(compressed.at(name)));
    EXPECT_EQ(lines, plain.at(EventFile(day, first, last)));
  }
}

TEST_F(ExportTest, AnInterruptedCompressedFileIsFinishedCompressedAndComparedByContent) {
  PublishN("orders", 4);
  options_.compression = ExportCompression::kZstd;
  CheckpointFailingSource crashing(*source_);
  EXPECT_THAT(Export("orders", *target_, &crashing), StatusIs(absl::StatusCode::kUnavailable));
  const absl::CivilDay day(2026, 12, 5);
  const std::string linked = EventFile(day, 1, 4, "orders", ExportCompression::kZstd);
  ASSERT_OK_AND_ASSIGN(std::string lines, ZstdDecompress(Files(*target_).at(linked)));
  // Another libzstd may frame the same lines differently: the same content
  // in two frames is still that file.
  const size_t half = lines.find('\n') + 1;
  ASSERT_OK(target_->Delete(linked));
  ASSERT_OK_AND_ASSIGN(std::string head, ZstdCompress(lines.substr(0, half)));
  ASSERT_OK_AND_ASSIGN(std::string tail, ZstdCompress(lines.substr(half)));
  ASSERT_OK(target_->PutIfAbsent(linked, head + tail).status());

  // Restarted without compression, the export adopts the compressed file
  // rather than writing 1-4 again as .jsonl, and goes on plain.
  PublishN("orders", 2);
  options_.compression = ExportCompression::kNone;
  ASSERT_OK_AND_ASSIGN(StreamExportReport report, Export("orders", *target_));
  EXPECT_EQ(report.files_adopted, 1u);
  EXPECT_EQ(report.files_written, 1u);
  std::vector<std::string> names;
  for (const auto& [name, bytes] : Files(*target_)) names.push_back(name);
  EXPECT_THAT(names, ElementsAre(linked, EventFile(day, 5, 6)));

  // Other content under the name is a clash, as for a plain file.
  ASSERT_OK(target_->Delete(linked));
  ASSERT_OK_AND_ASSIGN(std::string other, ZstdCompress(lines.substr(half)));
  ASSERT_OK(target_->PutIfAbsent(linked, other).status());
  options_.name = "again";
  options_.compression = ExportCompression::kZstd;
  EXPECT_THAT(Export("orders", *target_), HasErrorKind(ErrorKind::kConflict));
}

TEST(ZstdCodecTest, RoundTripsAndRefusesWhatIsNotAWholeFrame) {
  std::string big;
  for (int i = 0; i < 300'000; ++i) absl::StrAppend(&big, "{\"n\":", i, "}\n");
  ASSERT_OK_AND_ASSIGN(std::string frame, ZstdCompress(big));
  EXPECT_LT(frame.size(), big.size() / 4);
  ASSERT_OK_AND_ASSIGN(std::string round_trip, ZstdDecompress(frame));
  EXPECT_EQ(round_trip, big);
  EXPECT_THAT(ZstdDecompress(frame.substr(0, frame.size() / 2)),
              StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(ZstdDecompress("plain text"), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(ZstdDecompress(""), StatusIs(absl::StatusCode::kDataLoss));
}

TEST(ZstdCodecTest, ContentOfWholeMebibytesDecompresses) {
  // The decoder's output chunks are 1 MiB: content that ends exactly at a
  // chunk's end, in one frame or in two.
  const std::string mebibyte(1 << 20, 'x');
  for (const std::string& content : {mebibyte, mebibyte + mebibyte}) {
    ASSERT_OK_AND_ASSIGN(std::string frame, ZstdCompress(content));
    ASSERT_OK_AND_ASSIGN(std::string decompressed, ZstdDecompress(frame));
    EXPECT_EQ(decompressed, content);
  }
  ASSERT_OK_AND_ASSIGN(std::string first, ZstdCompress(mebibyte));
  ASSERT_OK_AND_ASSIGN(std::string two_frames, ZstdDecompress(first + first));
  EXPECT_EQ(two_frames, mebibyte + mebibyte);
  EXPECT_THAT(ZstdDecompress(first.substr(0, first.size() - 1)),
              StatusIs(absl::StatusCode::kDataLoss));
}

TEST_F(ExportTest, EventsTrimmedBeforeTheExportReadThemAreRecordedAsAGap) {
  ASSERT_OK_AND_ASSIGN(StreamPolicy policy, StreamPolicy::Parse("max_events=3"));
  ASSERT_OK(bus_->Declare("orders", policy));
  PublishN("orders", 2);
  ASSERT_OK(Export("orders", *target_).status());
  PublishN("orders", 6);  // 3..8; retention keeps 6..8.
  ASSERT_OK(bus_->Trim(1000).status());
  ASSERT_OK_AND_ASSIGN(StreamExportReport report, Export("orders", *target_));
  EXPECT_EQ(report.gaps, 1u);
  EXPECT_EQ(report.missed, 3u);
  EXPECT_EQ(report.events, 3u);
  std::map<std::string, std::string> files = Files(*target_);
  EXPECT_EQ(files[GapFileName("orders", 3, 5)],
            "{\"stream\":\"orders\",\"fromSequence\":3,\"toSequence\":5,\"missed\":3}\n");
  EXPECT_TRUE(files.count(EventFile(absl::CivilDay(2026, 12, 5), 6, 8)));
  EXPECT_EQ(files.size(), 3u);  // 1-2, the gap, 6-8.
}

TEST_F(ExportTest, AFileTheHeadEndsWaitsUntilItsFirstEventIsOldEnough) {
  options_.flush_after = absl::Seconds(60);
  PublishN("orders", 2);
  clock_.Advance(absl::Hours(24));
  PublishN("orders", 1);
  // Day one's file is closed by day two's event; day two's waits.
  ASSERT_OK_AND_ASSIGN(StreamExportReport first, Export("orders", *target_));
  EXPECT_EQ(first.files_written, 1u);
  EXPECT_EQ(first.lag, 1u);
  clock_.Advance(absl::Seconds(61));
  ASSERT_OK_AND_ASSIGN(StreamExportReport second, Export("orders", *target_));
  EXPECT_EQ(second.files_written, 1u);
  std::map<std::string, std::string> files = Files(*target_);
  EXPECT_TRUE(files.count(EventFile(absl::CivilDay(2026, 12, 5), 1, 2)));
  EXPECT_TRUE(files.count(EventFile(absl::CivilDay(2026, 12, 6), 3, 3)));
}

TEST_F(ExportTest, APassExportsTheStreamsItsPatternMatches) {
  PublishN("orders.eu", 2);
  PublishN("orders.us", 1);
  PublishN("payments", 1);
  ASSERT_OK_AND_ASSIGN(push::StreamPattern pattern, push::StreamPattern::Parse("orders.*"));
  ASSERT_OK_AND_ASSIGN(ExportPassReport report,
                       RunExportPass(*source_, *target_, pattern, options_, clock_));
  EXPECT_EQ(report.streams, 2u);
  EXPECT_EQ(report.totals.events, 3u);
  EXPECT_TRUE(report.failures.empty());
  std::vector<std::string> names;
  for (const auto& [name, bytes] : Files(*target_)) names.push_back(name.substr(0, name.find('/')));
  EXPECT_THAT(names, ElementsAre("stream=orders.eu", "stream=orders.us"));
}

TEST(ExportLayoutTest, NamesSortBySequenceAndParseBack) {
  const absl::CivilDay day(2026, 1, 2);
  constexpr ExportCompression kPlain = ExportCompression::kNone;
  const std::string nine = EventFileName("a", day, 9, 9, kPlain);
  const std::string ten = EventFileName("a", day, 10, 12, kPlain);
  EXPECT_LT(nine, ten);
  EXPECT_EQ(DayDirectory("a", day), "stream=a/year=2026/month=01/day=02/");
  std::optional<EventFileRange> range = ParseEventFileName(ten, "a");
  ASSERT_TRUE(range.has_value());
  EXPECT_EQ(range->first, 10u);
  EXPECT_EQ(range->last, 12u);
  EXPECT_EQ(range->compression, kPlain);
  const std::string zstd = EventFileName("a", day, 10, 12, ExportCompression::kZstd);
  EXPECT_TRUE(absl::EndsWith(zstd, "-00000000000000000012.jsonl.zst")) << zstd;
  ASSERT_TRUE(ParseEventFileName(zstd, "a").has_value());
  EXPECT_EQ(ParseEventFileName(zstd, "a")->compression, ExportCompression::kZstd);
  // A file of stream "a-b" is not one of "a", nor a gap record an event file.
  EXPECT_FALSE(ParseEventFileName(EventFileName("a-b", day, 1, 2, kPlain), "a").has_value());
  EXPECT_FALSE(ParseEventFileName(GapFileName("a", 1, 2), "a").has_value());
}

TEST(ExportLayoutTest, DaysAreUtc) {
  const absl::Time late =
      absl::FromCivil(absl::CivilSecond(2026, 12, 31, 23, 59, 59), absl::UTCTimeZone()) +
      absl::Nanoseconds(999'999'999);
  EXPECT_EQ(ExportDayOf(late), absl::CivilDay(2026, 12, 31));
  EXPECT_EQ(ExportDayOf(late + absl::Nanoseconds(1)), absl::CivilDay(2027, 1, 1));
}

}  // namespace
}  // namespace keel::lakehouse
