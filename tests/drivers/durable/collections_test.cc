// Collections on the durable driver: each write stores the document and
// its change event in one atomic write, `before` read at the commit point;
// history and time travel read the change stream, across a restart.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <map>
#include <random>
#include <thread>

#include "keel/core/clock.h"
#include "keel/core/errors.h"
#include "keel/statestore/fault_injecting_store.h"
#include "keel/statestore/leveldb/leveldb_store.h"
#include "keel/tests/drivers/durable/durable_test_util.h"
#include "keel/tests/testing/status_matchers.h"
#include "keel/tests/testing/temp_dir.h"

namespace keel::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class CollectionsTest : public ::testing::Test {
 protected:
  // LevelDB beneath: every read of the memory store copies it whole, which
  // ten thousand writes and their time travel would feel.
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<LevelDbStore>> base =
        LevelDbStore::Open(Config{{"path", dir_.Sub("db")}});
    ASSERT_OK(base.status());
    store_ = std::make_shared<FaultInjectingStore>(*std::move(base));
    Open();
  }

  void Open() {
    DriverContext context;
    context.clock = &clock_;
    absl::StatusOr<std::unique_ptr<EventBus>> bus =
        OpenDurableBus(store_, Options(SyncMode::kNone), context);
    ASSERT_OK(bus.status());
    bus_ = *std::move(bus);
    ASSERT_NE(bus_->collections(), nullptr);
  }
  void Restart() {
    ASSERT_OK(bus_->Close());
    bus_.reset();
    store_->Reopen();
    Open();
  }
  Collections& docs() { return *bus_->collections(); }

  absl::StatusOr<Document> Put(const std::string& id, const std::string& body,
                               std::optional<uint64_t> expected = std::nullopt) {
    return docs().Put("users", id, body, DocumentWriteOptions{expected});
  }

  // The change events of "users", parsed.
  std::vector<boost::json::object> Changes() {
    std::vector<boost::json::object> changes;
    absl::StatusOr<std::vector<Event>> all = ReadAll(*bus_, "users");
    EXPECT_OK(all.status());
    for (const Event& event : all.value_or(std::vector<Event>{})) {
      boost::json::object change = boost::json::parse(event.payload).as_object();
      change["type"] = event.type;
      change["sequence"] = event.sequence;
      changes.push_back(std::move(change));
    }
    return changes;
  }

  TempDir dir_;
  ManualClock clock_{absl::FromUnixSeconds(1'800'000'000)};
  std::shared_ptr<FaultInjectingStore> store_;
  std::unique_ptr<EventBus> bus_;
};

TEST_F(CollectionsTest, EachWriteIsADocumentAndAChangeEvent) {
  ASSERT_OK_AND_ASSIGN(Document inserted, Put("ada", R"({"name":"Ada"})"));
  EXPECT_EQ(inserted.version, 1u);
  ASSERT_OK_AND_ASSIGN(Document updated, Put("ada", R"({"name":"Ada L."})"));
  EXPECT_EQ(updated.version, 2u);
  ASSERT_OK_AND_ASSIGN(Document deleted, docs().Delete("users", "ada", {}));
  EXPECT_TRUE(deleted.deleted);
  EXPECT_EQ(deleted.version, 3u);
  EXPECT_THAT(docs().Get("users", "ada"), HasErrorKind(ErrorKind::kNotFound));
  ASSERT_OK_AND_ASSIGN(Document again, Put("ada", R"({"name":"Ada again"})"));
  EXPECT_EQ(again.version, 4u);

  const std::vector<boost::json::object> changes = Changes();
  ASSERT_EQ(changes.size(), 4u);
  EXPECT_EQ(boost::json::serialize(changes[0]),
            R"({"id":"ada","version":1,"before":null,"after":{"name":"Ada"},)"
            R"("type":"users.insert","sequence":1})");
  EXPECT_EQ(changes[1].at("type").as_string(), "users.update");
  EXPECT_EQ(boost::json::serialize(changes[1].at("before")), R"({"name":"Ada"})");
  EXPECT_EQ(changes[2].at("type").as_string(), "users.delete");
  EXPECT_TRUE(changes[2].at("after").is_null());
  EXPECT_EQ(changes[3].at("type").as_string(), "users.insert");
  EXPECT_TRUE(changes[3].at("before").is_null());
  // The receipt's cursor is the change event's.
  EXPECT_EQ(again.cursor.sequence, 4u);
}

TEST_F(CollectionsTest, AStaleExpectedVersionIsAConflictAndStoresNothing) {
  ASSERT_OK(Put("ada", R"({"v":1})", 0).status());
  absl::StatusOr<Document> stale = Put("ada", R"({"v":2})", 0);
  ASSERT_THAT(stale, HasErrorKind(ErrorKind::kConflict));
  ASSERT_TRUE(GetConflict(stale.status()).has_value());
  EXPECT_EQ(GetConflict(stale.status())->actual, 1u);
  EXPECT_EQ(Changes().size(), 1u);
  ASSERT_OK_AND_ASSIGN(Document now, docs().Get("users", "ada"));
  EXPECT_EQ(now.body, R"({"v":1})");
  ASSERT_OK(Put("ada", R"({"v":2})", 1).status());
  EXPECT_THAT(docs().Delete("users", "nobody", {}), HasErrorKind(ErrorKind::kNotFound));
  EXPECT_THAT(Put("ada", "{not json"), HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(Put("no/slash", "{}"), HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_EQ(Changes().size(), 2u);
}

TEST_F(CollectionsTest, AFailedWriteStoresNeitherTheDocumentNorItsEvent) {
  ASSERT_OK(Put("ada", R"({"v":1})").status());
  store_->FailNthWrite(1, absl::UnavailableError("disk full"));
  EXPECT_THAT(Put("ada", R"({"v":2})"), StatusIs(absl::StatusCode::kUnavailable));
  ASSERT_OK_AND_ASSIGN(Document now, docs().Get("users", "ada"));
  EXPECT_EQ(now.body, R"({"v":1})");
  EXPECT_EQ(now.version, 1u);
  EXPECT_EQ(Changes().size(), 1u);
  // The next write takes the version and sequence the failed one did not.
  ASSERT_OK_AND_ASSIGN(Document next, Put("ada", R"({"v":3})"));
  EXPECT_EQ(next.version, 2u);
  EXPECT_EQ(next.cursor.sequence, 2u);
  EXPECT_EQ(boost::json::serialize(Changes()[1].at("before")), R"({"v":1})");
}

TEST_F(CollectionsTest, OfTwoWritersExpectingOneVersionOneWins) {
  ASSERT_OK(Put("ada", R"({"v":0})").status());
  for (int round = 0; round < 50; ++round) {
    ASSERT_OK_AND_ASSIGN(Document now, docs().Get("users", "ada"));
    std::atomic<int> won{0}, conflicted{0};
    std::vector<std::thread> writers;
    for (int w = 0; w < 2; ++w) {
      writers.emplace_back([&, w] {
        absl::StatusOr<Document> done = Put("ada", absl::StrCat(R"({"w":)", w, "}"), now.version);
        if (done.ok()) ++won;
        if (GetErrorKind(done.status()) == ErrorKind::kConflict) ++conflicted;
      });
    }
    for (std::thread& writer : writers) writer.join();
    EXPECT_EQ(won.load(), 1);
    EXPECT_EQ(conflicted.load(), 1);
  }
}

// Folds the change stream: each event's `before` is the previous event's
// `after` of its document, versions count up by one, and GetAt at every
// event's cursor is the fold up to it.
void ExpectChangeStreamFolds(EventBus& bus, Collections& docs, size_t writes) {
  absl::StatusOr<std::vector<Event>> all = ReadAll(bus, "users");
  ASSERT_OK(all.status());
  ASSERT_EQ(all->size(), writes);
  std::map<std::string, std::pair<uint64_t, std::string>> fold;  // id -> version, after
  for (size_t i = 0; i < all->size(); ++i) {
    const Event& event = (*all)[i];
    boost::json::object change = boost::json::parse(event.payload).as_object();
    const std::string id(change.at("id").as_string());
    auto& [version, after] = fold[id];
    ASSERT_EQ(boost::json::serialize(change.at("before")), version == 0 ? "null" : after)
        << "event " << event.sequence;
    ASSERT_EQ(change.at("version").to_number<uint64_t>(), version + 1);
    version += 1;
    after = boost::json::serialize(change.at("after"));
    if (i % 97 == 0) {  // Time travel to this event, for a sample.
      absl::StatusOr<Document> then =
          docs.GetAt("users", id, Cursor::For("users", bus.replayer()->epoch(), event.sequence));
      if (after == "null") {
        EXPECT_THAT(then, HasErrorKind(ErrorKind::kNotFound));
      } else {
        ASSERT_OK(then.status());
        EXPECT_EQ(boost::json::serialize(boost::json::parse(then->body)), after);
      }
    }
  }
  for (const auto& [id, state] : fold) {
    absl::StatusOr<Document> now = docs.Get("users", id);
    if (state.second == "null") {
      EXPECT_THAT(now, HasErrorKind(ErrorKind::kNotFound));
      continue;
    }
    ASSERT_OK(now.status());
    EXPECT_EQ(now->version, state.first);
    EXPECT_EQ(boost::json::serialize(boost::json::parse(now->body)), state.second);
    ASSERT_OK_AND_ASSIGN(std::vector<Document> history, docs.History("users", id));
    EXPECT_EQ(history.size(), state.first);
    EXPECT_EQ(history.back().version, state.first);
  }
}

TEST_F(CollectionsTest, TenThousandConcurrentWritesFoldIntoTheirDocuments) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 2500;
  std::atomic<size_t> writes{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 random(t);
      for (int i = 0; i < kPerThread; ++i) {
        const std::string id = absl::StrCat("u", random() % 20);
        absl::StatusOr<Document> done;
        if (random() % 5 == 0) {
          done = docs().Delete("users", id, {});
        } else {
          std::optional<uint64_t> expected;
          if (random() % 3 == 0) {
            absl::StatusOr<Document> now = docs().Get("users", id);
            expected = now.ok() ? now->version : 0;
          }
          done = Put(id, absl::StrCat(R"({"t":)", t, R"(,"i":)", i, "}"), expected);
        }
        if (done.ok()) ++writes;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_GT(writes.load(), 5000u);
  ExpectChangeStreamFolds(*bus_, docs(), writes.load());
  Restart();
  ExpectChangeStreamFolds(*bus_, docs(), writes.load());
}

TEST_F(CollectionsTest, TimeTravelByCursorAndTime) {
  ASSERT_OK_AND_ASSIGN(Document v1, Put("ada", R"({"v":1})"));
  const absl::Time first = clock_.Now();
  clock_.Advance(absl::Minutes(1));
  ASSERT_OK(Put("grace", R"({"v":1})").status());
  clock_.Advance(absl::Minutes(1));
  ASSERT_OK_AND_ASSIGN(Document v2, Put("ada", R"({"v":2})"));
  clock_.Advance(absl::Minutes(1));
  ASSERT_OK(docs().Delete("users", "ada", {}).status());

  ASSERT_OK_AND_ASSIGN(Document at_v1, docs().GetAt("users", "ada", v1.cursor));
  EXPECT_EQ(at_v1.body, R"({"v":1})");
  // Grace's insert, between ada's versions, is a bookmark too.
  ASSERT_OK_AND_ASSIGN(Document between,
                       docs().GetAt("users", "ada", Cursor::For("users", v1.cursor.epoch, 2)));
  EXPECT_EQ(between.version, 1u);
  ASSERT_OK_AND_ASSIGN(Document at_v2, docs().GetAt("users", "ada", v2.cursor));
  EXPECT_EQ(at_v2.body, R"({"v":2})");
  EXPECT_THAT(docs().GetAt("users", "grace", v1.cursor), HasErrorKind(ErrorKind::kNotFound));
  ASSERT_OK_AND_ASSIGN(Document at_time,
                       docs().GetAtTime("users", "ada", first + absl::Seconds(90)));
  EXPECT_EQ(at_time.version, 1u);
  ASSERT_OK_AND_ASSIGN(Document at_instant, docs().GetAtTime("users", "ada", first));
  EXPECT_EQ(at_instant.version, 1u);
  EXPECT_THAT(docs().GetAtTime("users", "ada", first - absl::Seconds(1)),
              HasErrorKind(ErrorKind::kNotFound));
  EXPECT_THAT(docs().GetAtTime("users", "ada", clock_.Now()), HasErrorKind(ErrorKind::kNotFound));
  ASSERT_OK_AND_ASSIGN(std::vector<Document> history, docs().History("users", "ada"));
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(history[0].body, R"({"v":1})");
  EXPECT_EQ(history[1].body, R"({"v":2})");
  EXPECT_TRUE(history[2].deleted);
  EXPECT_THAT(docs().GetAt("users", "ada", Cursor::For("orders", v1.cursor.epoch, 1)),
              HasErrorKind(ErrorKind::kCursorMismatch));
}

TEST_F(CollectionsTest, HistoryRetentionRemovedIsAGapNeverAPartialAnswer) {
  ASSERT_OK_AND_ASSIGN(StreamPolicy policy, StreamPolicy::Parse("max_events=2"));
  ASSERT_OK(bus_->Declare("users", policy));
  for (int v = 1; v <= 4; ++v) ASSERT_OK(Put("ada", absl::StrCat(R"({"v":)", v, "}")).status());
  ASSERT_OK(bus_->Trim(100).status());
  EXPECT_THAT(docs().History("users", "ada"), HasErrorKind(ErrorKind::kRetentionGap));
  EXPECT_THAT(docs().GetAt("users", "ada", Cursor::For("users", bus_->replayer()->epoch(), 1)),
              HasErrorKind(ErrorKind::kRetentionGap));
  // The document itself outlives its events.
  ASSERT_OK_AND_ASSIGN(Document now, docs().Get("users", "ada"));
  EXPECT_EQ(now.body, R"({"v":4})");
  EXPECT_EQ(now.version, 4u);
}

TEST_F(CollectionsTest, DeletingTheStreamDeletesItsDocuments) {
  ASSERT_OK(Put("ada", R"({"v":1})").status());
  ASSERT_OK(Put("ada", R"({"v":2})").status());
  ASSERT_OK(Put("bob", R"({"v":1})").status());
  ASSERT_OK(docs().Put("users.archive", "ada", R"({"kept":true})", {}).status());
  ASSERT_OK(bus_->DeleteStream("users").status());
  EXPECT_THAT(docs().Get("users", "ada"), HasErrorKind(ErrorKind::kNotFound));
  EXPECT_THAT(docs().Get("users", "bob"), HasErrorKind(ErrorKind::kNotFound));
  // Another collection whose name starts alike keeps its documents.
  EXPECT_OK(docs().Get("users.archive", "ada").status());

  // The collection made again starts over, across a restart too: no
  // version, `before` or history of the deleted one.
  ASSERT_OK_AND_ASSIGN(Document fresh, Put("ada", R"({"v":"new"})", 0));
  EXPECT_EQ(fresh.version, 1u);
  Restart();
  ASSERT_OK_AND_ASSIGN(std::vector<Document> history, docs().History("users", "ada"));
  ASSERT_EQ(history.size(), 1u);
  EXPECT_EQ(history[0].body, R"({"v":"new"})");
  std::vector<boost::json::object> changes = Changes();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].at("type").as_string(), "users.insert");
  EXPECT_TRUE(changes[0].at("before").is_null());
}

}  // namespace
}  // namespace keel::testing
