// Tiering of the durable driver onto cold segments (rfcs/0008-cold-segments.md):
// reads across the hot/cold boundary, the crash matrix of tiering and cold
// expiry, segments damaged behind Keel's back, and a cold store that goes
// away and comes back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "keel/coldstore/fs/fs_cold_store.h"
#include "keel/core/clock.h"
#include "keel/core/errors.h"
#include "keel/core/logger.h"
#include "keel/drivers/durable/cold_layout.h"
#include "keel/drivers/durable/durable_bus.h"
#include "keel/statestore/fault_injecting_store.h"
#include "keel/statestore/memory/memory_store.h"
#include "keel/tests/drivers/durable/durable_test_util.h"
#include "keel/tests/drivers/durable/fault_injecting_cold_store.h"
#include "keel/tests/testing/status_matchers.h"
#include "keel/tests/testing/temp_dir.h"

namespace keel::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kStream[] = "orders";

class ColdTierTest : public ::testing::Test {
 protected:
  ColdTierTest() {
    absl::StatusOr<std::unique_ptr<FsColdStore>> fs = FsColdStore::Open(dir_.Sub("cold"));
    EXPECT_OK(fs);
    cold_ = std::make_shared<FaultInjectingColdStore>(std::move(*fs));
  }

  absl::StatusOr<std::unique_ptr<EventBus>> Open(
      std::function<absl::Status(TierStep, absl::string_view)> fault = nullptr,
      bool with_cold_store = true) {
    DurableOptions options = Options(SyncMode::kAlways);
    if (with_cold_store) options.cold.store = cold_;
    options.cold.segment_events = 100;
    options.cold.orphan_grace = absl::ZeroDuration();
    options.cold.orphan_sweep_interval = absl::ZeroDuration();
    options.cold.fault = std::move(fault);
    DriverContext context;
    context.clock = &clock_;
    context.logger = logger_;
    return OpenDurableBus(store_, options, context);
  }

  // Publishes events 1..n (payload "i") in batches.
  static void Publish(EventBus& bus, int from, int to) {
    for (int i = from; i <= to;) {
      std::vector<Event> batch;
      for (int j = 0; j < 100 && i <= to; ++j, ++i) {
        Event event = NewEvent(kStream, i);
        event.id = absl::StrCat("id-", i);
        batch.push_back(std::move(event));
      }
      ASSERT_OK(bus.PublishBatch(kStream, std::move(batch)).status());
    }
  }

  // Trims (and tiers) until a pass changes nothing. (A stream whose
  // oldest segment straddles its retention cut keeps NeedsTrim true.)
  static absl::Status Drain(EventBus& bus) {
    for (int pass = 0; pass < 100 && bus.NeedsTrim(); ++pass) {
      const ColdStats before = ColdStatsOf(bus).value_or(ColdStats{});
      absl::StatusOr<TrimReport> report = bus.Trim(100000);
      if (!report.ok()) return report.status();
      const ColdStats after = ColdStatsOf(bus).value_or(ColdStats{});
      if (report->events == 0 && !report->more && after.uploads == before.uploads &&
          after.expired_segments == before.expired_segments && after.segments == before.segments) {
        break;
      }
    }
    return absl::OkStatus();
  }

  bool HasKey(const std::string& key) { return store_->Get(key).ok(); }

  std::vector<ObjectInfo> Objects() {
    absl::StatusOr<std::vector<ObjectInfo>> objects = cold_->List("");
    EXPECT_OK(objects);
    return objects.ok() ? *objects : std::vector<ObjectInfo>{};
  }

  // A crash at a step: the process is killed there (nothing more reaches
  // the store) and, with `power_loss`, unsynced writes are lost too.
  std::function<absl::Status(TierStep, absl::string_view)> CrashAt(TierStep at, bool power_loss) {
    return [this, at, power_loss](TierStep step, absl::string_view) -> absl::Status {
      if (step != at || crashed_) return absl::OkStatus();
      crashed_ = true;
      if (power_loss) {
        EXPECT_OK(store_->SimulateCrash());
      }
      EXPECT_OK(store_->Close());
      return absl::AbortedError("crashed here");
    };
  }

  TempDir dir_;
  ManualClock clock_;
  std::shared_ptr<CapturingLogger> logger_ = std::make_shared<CapturingLogger>();
  std::shared_ptr<FaultInjectingStore> store_ =
      std::make_shared<FaultInjectingStore>(std::make_unique<MemoryStore>());
  std::shared_ptr<FaultInjectingColdStore> cold_;
  bool crashed_ = false;
};

void ExpectPayloads(const std::vector<Event>& events, uint64_t first, uint64_t last) {
  ASSERT_EQ(events.size(), last - first + 1);
  for (size_t i = 0; i < events.size(); ++i) {
    ASSERT_EQ(events[i].sequence, first + i);
    ASSERT_EQ(events[i].payload, std::to_string(first + i));
  }
}

TEST_F(ColdTierTest, TenThousandEventsReplayIdenticallyAcrossTheHotColdBoundary) {
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  ASSERT_OK(bus->Declare(kStream, StreamPolicy::Parse("hot.max_events=1000").value()));
  Publish(*bus, 1, 10000);
  ASSERT_OK_AND_ASSIGN(std::vector<Event> before, ReadAll(*bus, kStream));
  ASSERT_OK(Drain(*bus));

  std::optional<ColdStats> stats = ColdStatsOf(*bus);
  ASSERT_TRUE(stats.has_value());
  EXPECT_EQ(stats->segments, 90u);  // 9000 events, 100 a segment.
  EXPECT_EQ(Objects().size(), 90u);
  EXPECT_FALSE(HasKey(durable::EntryKey(kStream, 1)));  // Gone from hot.
  EXPECT_FALSE(HasKey(durable::EntryKey(kStream, 9000)));
  EXPECT_TRUE(HasKey(durable::EntryKey(kStream, 9001)));
  ASSERT_OK_AND_ASSIGN(StreamInfo info, bus->replayer()->Bounds(kStream));
  EXPECT_EQ(info.first_sequence, 1u);
  EXPECT_EQ(info.last_sequence, 10000u);

  ASSERT_OK_AND_ASSIGN(std::vector<Event> after, ReadAll(*bus, kStream));
  EXPECT_EQ(after, before);  // Every field, in order.

  // And after a restart, from the records alone.
  ASSERT_OK(bus->Close());
  store_->Reopen();
  ASSERT_OK_AND_ASSIGN(bus, Open());
  ASSERT_OK_AND_ASSIGN(std::vector<Event> reopened, ReadAll(*bus, kStream));
  EXPECT_EQ(reopened, before);
  ASSERT_OK_AND_ASSIGN(Receipt next, bus->Publish(NewEvent(kStream, 10001)));
  EXPECT_EQ(next.sequence, 10001u);
}

TEST_F(ColdTierTest, AFollowerAndAConsumerGroupFarBehindCatchUpThroughCold) {
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  ASSERT_OK(bus->Declare(kStream, StreamPolicy::Parse("hot.max_events=200").value()));
  Publish(*bus, 1, 2000);
  ASSERT_OK(Drain(*bus));
  ASSERT_GT(ColdStatsOf(*bus)->segments, 0u);

  ASSERT_OK_AND_ASSIGN(auto follower, bus->Follow(kStream, Position::Earliest()));
  std::vector<Event> followed;
  while (followed.size() < 2000) {
    ASSERT_OK_AND_ASSIGN(auto events, follower->Next(500, absl::Seconds(10)));
    ASSERT_FALSE(events.empty());
    for (const EventPtr& event : events) followed.push_back(*event);
  }
  ExpectPayloads(followed, 1, 2000);

  std::vector<Event> consumed;
  while (consumed.size() < 2000) {
    ConsumeRequest request;
    request.stream = kStream;
    request.group = "billing";
    request.limit = 300;
    ASSERT_OK_AND_ASSIGN(ConsumePage page, bus->groups()->Consume(request));
    ASSERT_FALSE(page.events.empty());
    for (Event& event : page.events) consumed.push_back(std::move(event));
    ASSERT_OK(bus->groups()->Commit(kStream, "billing", page.lease.to, page.lease.token));
  }
  ExpectPayloads(consumed, 1, 2000);
}

TEST_F(ColdTierTest, AStreamWithoutHotBoundsStaysHot) {
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  Publish(*bus, 1, 500);
  EXPECT_FALSE(bus->NeedsTrim());
  ASSERT_OK(bus->Trim(100000).status());
  EXPECT_EQ(ColdStatsOf(*bus)->segments, 0u);
  EXPECT_TRUE(Objects().empty());
  EXPECT_TRUE(HasKey(durable::EntryKey(kStream, 1)));
}

struct CrashCase {
  TierStep step;
  bool power_loss;
};

class TieringCrashTest : public ColdTierTest, public ::testing::WithParamInterface<CrashCase> {};

// A crash after each step of tiering loses nothing, duplicates nothing and
// leaves no intent or orphan object behind once the next open and pass ran.
TEST_P(TieringCrashTest, LosesNothingDuplicatesNothingLeavesNothingDangling) {
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(CrashAt(GetParam().step, GetParam().power_loss)));
    ASSERT_OK(bus->Declare(kStream, StreamPolicy::Parse("hot.max_events=100").value()));
    Publish(*bus, 1, 350);
    EXPECT_FALSE(Drain(*bus).ok());
    ASSERT_TRUE(crashed_);
  }
  store_->Reopen();
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  ASSERT_OK_AND_ASSIGN(std::vector<Event> all, ReadAll(*bus, kStream));
  ExpectPayloads(all, 1, 350);
  ASSERT_OK(Drain(*bus));
  EXPECT_FALSE(HasKey(durable::TierIntentKey(kStream)));
  ASSERT_OK_AND_ASSIGN(all, ReadAll(*bus, kStream));
  ExpectPayloads(all, 1, 350);
  EXPECT_EQ(ColdStatsOf(*bus)->segments, 3u);  // [1, 100], [101, 200], [201, 250].
  EXPECT_EQ(Objects().size(), 3u);             // Each object has its live record, and no other.
  for (const ObjectInfo& object : Objects()) EXPECT_OK(cold_->Size(object.name));
  ASSERT_OK_AND_ASSIGN(Receipt next, bus->Publish(NewEvent(kStream, 351)));
  EXPECT_EQ(next.sequence, 351u);
}

INSTANTIATE_TEST_SUITE_P(EachStep, TieringCrashTest,
                         ::testing::Values(CrashCase{TierStep::kIntentWritten, false},
                                           CrashCase{TierStep::kIntentWritten, true},
                                           CrashCase{TierStep::kUploaded, false},
                                           CrashCase{TierStep::kUploaded, true},
                                           CrashCase{TierStep::kTiered, false},
                                           CrashCase{TierStep::kTiered, true}));

class ExpiryCrashTest : public ColdTierTest, public ::testing::WithParamInterface<CrashCase> {};

// Total retention expires whole segments: a crash after marking them or
// after deleting an object leaves a stream that reads as a contiguous
// suffix, a retention gap below it, and no record or object left over.
TEST_P(ExpiryCrashTest, ExpiresWholeSegmentsAndLeavesNoDanglingRecord) {
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open(CrashAt(GetParam().step, GetParam().power_loss)));
    ASSERT_OK(
        bus->Declare(kStream, StreamPolicy::Parse("max_events=250 hot.max_events=100").value()));
    Publish(*bus, 1, 200);
    ASSERT_OK(Drain(*bus));  // Cold [1, 100], hot [101, 200].
    Publish(*bus, 201, 300);
    ASSERT_OK(Drain(*bus));  // Cold up to 200; the cut at 51 waits for [1, 100] to expire whole.
    ASSERT_EQ(ColdStatsOf(*bus)->segments, 2u);
    Publish(*bus, 301, 400);
    EXPECT_FALSE(Drain(*bus).ok());  // The cut at 151: [1, 100] expires, and the crash.
    ASSERT_TRUE(crashed_);
  }
  store_->Reopen();
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  ASSERT_OK(Drain(*bus));
  ASSERT_OK_AND_ASSIGN(std::vector<Event> all, ReadAll(*bus, kStream));
  ASSERT_FALSE(all.empty());
  ExpectPayloads(all, all.front().sequence, 400);
  EXPECT_GE(all.size(), 250u);  // Whole segments went: never more than retention asks.
  EXPECT_EQ((all.front().sequence - 1) % 100, 0u);
  std::unique_ptr<StoreIterator> retiring = store_->NewIterator(durable::RetiringSegmentRange());
  retiring->Seek(durable::RetiringSegmentRange().start);
  EXPECT_FALSE(retiring->Valid());
  EXPECT_EQ(Objects().size(), ColdStatsOf(*bus)->segments);
  // Below the first retained event: a retention gap, never a jump.
  ReplayRequest request;
  request.stream = kStream;
  request.after = Position::After(Cursor::For(kStream, bus->replayer()->epoch(), 5));
  EXPECT_THAT(bus->replayer()->Replay(request).status(), HasErrorKind(ErrorKind::kRetentionGap));
}

INSTANTIATE_TEST_SUITE_P(EachStep, ExpiryCrashTest,
                         ::testing::Values(CrashCase{TierStep::kExpiryMarked, false},
                                           CrashCase{TierStep::kExpiryMarked, true},
                                           CrashCase{TierStep::kObjectDeleted, false},
                                           CrashCase{TierStep::kObjectDeleted, true}));

// The put landed but its response was lost: the next pass finds the intent
// and the object, checks it and finishes; a repeated upload of it is
// harmless.
TEST_F(ColdTierTest, AnUploadWhoseResponseWasLostIsFinishedNotDuplicated) {
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  ASSERT_OK(bus->Declare(kStream, StreamPolicy::Parse("hot.max_events=100").value()));
  Publish(*bus, 1, 200);
  cold_->LoseNextPutResponse();
  ASSERT_OK(bus->Trim(100000).status());  // Paused, not failed.
  EXPECT_TRUE(HasKey(durable::TierIntentKey(kStream)));
  EXPECT_EQ(ColdStatsOf(*bus)->upload_failures, 1u);
  ASSERT_OK(Drain(*bus));
  EXPECT_FALSE(HasKey(durable::TierIntentKey(kStream)));
  EXPECT_EQ(ColdStatsOf(*bus)->segments, 1u);
  EXPECT_EQ(Objects().size(), 1u);
  const std::string name = Objects().front().name;
  ASSERT_OK_AND_ASSIGN(std::string bytes, cold_->Read(name));
  ASSERT_OK_AND_ASSIGN(PutOutcome again, cold_->PutIfAbsent(name, bytes));
  EXPECT_EQ(again, PutOutcome::kAlreadyPresent);
  ASSERT_OK_AND_ASSIGN(std::vector<Event> all, ReadAll(*bus, kStream));
  ExpectPayloads(all, 1, 200);
}

TEST_F(ColdTierTest, ASegmentDeletedOrTruncatedBehindKeelsBackFailsLoudlyNamingIt) {
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  ASSERT_OK(bus->Declare(kStream, StreamPolicy::Parse("hot.max_events=100").value()));
  Publish(*bus, 1, 400);
  ASSERT_OK(Drain(*bus));
  std::vector<ObjectInfo> objects = Objects();
  ASSERT_EQ(objects.size(), 3u);

  // Truncated: the second segment loses its tail.
  const std::filesystem::path second = std::filesystem::path(dir_.Sub("cold")) / objects[1].name;
  std::filesystem::resize_file(second, objects[1].size / 2);
  absl::StatusOr<std::vector<Event>> read = ReadAll(*bus, kStream);
  EXPECT_THAT(read.status(), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(std::string(read.status().message()), HasSubstr(objects[1].name));

  // Deleted: the first.
  std::filesystem::remove(std::filesystem::path(dir_.Sub("cold")) / objects[0].name);
  read = ReadAll(*bus, kStream);
  EXPECT_THAT(read.status(), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(std::string(read.status().message()), HasSubstr(objects[0].name));

  // A read that starts in the undamaged third segment still works.
  ReplayRequest request;
  request.stream = kStream;
  request.limit = 1000;
  request.after = Position::After(Cursor::For(kStream, bus->replayer()->epoch(), 200));
  ASSERT_OK_AND_ASSIGN(ReplayPage page, bus->replayer()->Replay(request));
  ExpectPayloads(page.events, 201, 400);
}

// The pages of a sequential replay start inside the segment the previous
// page stopped in: each segment is read from the cold store once, not once a
// page (ColdStats::cold_reads, keel_cold_reads_total in the daemon).
TEST_F(ColdTierTest, APagedReplayReadsEachSegmentOnce) {
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  ASSERT_OK(bus->Declare(kStream, StreamPolicy::Parse("hot.max_events=100").value()));
  Publish(*bus, 1, 400);
  ASSERT_OK(Drain(*bus));
  ASSERT_EQ(ColdStatsOf(*bus)->segments, 3u);
  const uint64_t reads_before = ColdStatsOf(*bus)->cold_reads;

  std::vector<Event> all;
  ReplayRequest request;
  request.stream = kStream;
  request.limit = 10;
  while (true) {
    ASSERT_OK_AND_ASSIGN(ReplayPage page, bus->replayer()->Replay(request));
    all.insert(all.end(), page.events.begin(), page.events.end());
    if (page.reached_end) break;
    request.after = Position::After(page.next);
  }
  ExpectPayloads(all, 1, 400);
  EXPECT_EQ(ColdStatsOf(*bus)->cold_reads - reads_before, 3u);
}

TEST_F(ColdTierTest, ColdStoreDownPausesTieringPublishingGoesOnAndItDrainsWhenBack) {
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  ASSERT_OK(bus->Declare(kStream, StreamPolicy::Parse("hot.max_events=100").value()));
  cold_->SetDown(true);
  Publish(*bus, 1, 300);
  ASSERT_OK(bus->Trim(100000).status());
  Publish(*bus, 301, 500);  // Publishing goes on.
  ASSERT_OK(bus->Trim(100000).status());
  std::optional<ColdStats> stats = ColdStatsOf(*bus);
  EXPECT_TRUE(stats->paused);
  EXPECT_GE(stats->upload_failures, 1u);
  EXPECT_EQ(stats->segments, 0u);
  EXPECT_TRUE(HasKey(durable::EntryKey(kStream, 1)));  // Hot grew past its bound.
  EXPECT_TRUE(bus->NeedsTrim());
  int warnings = 0;
  for (const CapturingLogger::Line& line : logger_->lines()) {
    if (absl::StrContains(line.message, "tiering pauses")) ++warnings;
  }
  EXPECT_EQ(warnings, 1);

  cold_->SetDown(false);
  ASSERT_OK(Drain(*bus));
  stats = ColdStatsOf(*bus);
  EXPECT_FALSE(stats->paused);
  EXPECT_EQ(stats->segments, 4u);
  ASSERT_OK_AND_ASSIGN(std::vector<Event> all, ReadAll(*bus, kStream));
  ExpectPayloads(all, 1, 500);
}

TEST_F(ColdTierTest, DeletingAStreamDeletesItsSegmentsAndNewEventsStartAfterIt) {
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open());
    ASSERT_OK(bus->Declare(kStream, StreamPolicy::Parse("hot.max_events=100").value()));
    Publish(*bus, 1, 500);
    ASSERT_OK(Drain(*bus));
    ASSERT_EQ(ColdStatsOf(*bus)->segments, 4u);
    ASSERT_FALSE(Objects().empty());
    ASSERT_OK_AND_ASSIGN(DeletionReport report, bus->DeleteStream(kStream));
    EXPECT_EQ(report.events, 500u);
    EXPECT_EQ(ColdStatsOf(*bus)->segments, 0u);
    ASSERT_OK_AND_ASSIGN(std::vector<Event> none, ReadAll(*bus, kStream));
    EXPECT_TRUE(none.empty());
    ASSERT_OK(Drain(*bus));  // The tiering pass deletes the retired objects.
    EXPECT_TRUE(Objects().empty());
  }
  store_->Reopen();
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  EXPECT_FALSE(HasKey(durable::ColdSummaryKey(kStream)));
  EXPECT_FALSE(HasKey(durable::EntryKey(kStream, 500)));
  ASSERT_OK_AND_ASSIGN(Receipt fresh, bus->Publish(NewEvent(kStream, 1)));
  EXPECT_EQ(fresh.sequence, 502u);
  ASSERT_OK_AND_ASSIGN(std::vector<Event> all, ReadAll(*bus, kStream));
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].sequence, 502u);
}

TEST_F(ColdTierTest, AStoreWithColdSegmentsRefusesToOpenWithoutAColdStore) {
  {
    ASSERT_OK_AND_ASSIGN(auto bus, Open());
    ASSERT_OK(bus->Declare(kStream, StreamPolicy::Parse("hot.max_events=100").value()));
    Publish(*bus, 1, 200);
    ASSERT_OK(Drain(*bus));
  }
  store_->Reopen();
  EXPECT_THAT(Open(nullptr, /*with_cold_store=*/false).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

// An object no record names (left by a crash between a rolled-back intent
// and its delete, or by anything else) is swept after the grace period.
TEST_F(ColdTierTest, OrphanObjectsAreSweptAfterTheGracePeriod) {
  ASSERT_OK_AND_ASSIGN(auto bus, Open());
  ASSERT_OK(bus->Declare(kStream, StreamPolicy::Parse("hot.max_events=100").value()));
  Publish(*bus, 1, 200);
  ASSERT_OK(Drain(*bus));
  const std::string live = Objects().front().name;
  ASSERT_OK_AND_ASSIGN(std::string bytes, cold_->Read(live));
  const std::string orphan = "stream=orders/00000000000000000900-00000000000000000999-0badcafe.seg";
  ASSERT_OK(cold_->PutIfAbsent(orphan, bytes).status());
  Publish(*bus, 201, 300);
  ASSERT_OK(Drain(*bus));  // Seen, then (grace 0) deleted on the next sweep.
  ASSERT_OK(bus->Trim(1).status());
  for (const ObjectInfo& object : Objects()) EXPECT_NE(object.name, orphan);
  ASSERT_OK(cold_->Size(live));
}

}  // namespace
}  // namespace keel::testing
