#include "keel/statestore/fault_injecting_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "keel/statestore/leveldb/leveldb_store.h"
#include "keel/statestore/memory/memory_store.h"
#include "keel/tests/testing/status_matchers.h"
#include "keel/tests/testing/temp_dir.h"

namespace keel {
namespace {

using ::keel::testing::HasErrorKind;
using ::keel::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::Ne;
using ::testing::Pair;
using ::testing::StartsWith;

class FaultInjectingStoreTest : public ::testing::Test {
 protected:
  FaultInjectingStoreTest() : store_(std::make_unique<MemoryStore>()) {}

  absl::Status Put(absl::string_view key, absl::string_view value, bool sync = false) {
    WriteBatch batch;
    batch.Put(key, value);
    return store_.Write(batch, WriteOptions{.sync = sync});
  }
  absl::Status Delete(absl::string_view key, bool sync = false) {
    WriteBatch batch;
    batch.Delete(key);
    return store_.Write(batch, WriteOptions{.sync = sync});
  }
  std::string GetOrMissing(absl::string_view key) {
    absl::StatusOr<std::string> value = store_.Get(key);
    if (value.status().code() == absl::StatusCode::kNotFound) return "<missing>";
    EXPECT_OK(value);
    return value.ok() ? *value : "<error>";
  }

  FaultInjectingStore store_;
};

TEST_F(FaultInjectingStoreTest, PassesThroughWithoutFaults) {
  ASSERT_OK(Put("a", "1"));
  ASSERT_OK(Put("b", "2", /*sync=*/true));
  EXPECT_EQ(GetOrMissing("a"), "1");
  EXPECT_EQ(store_.base().Get("b").value_or(""), "2");
  EXPECT_EQ(store_.writes(), 2u);
  EXPECT_EQ(store_.synced_writes(), 1u);
}

TEST_F(FaultInjectingStoreTest, FailNthWriteFailsThatWriteAndAppliesNothing) {
  store_.FailNthWrite(2, absl::UnavailableError("disk full"));
  ASSERT_OK(Put("first", "1"));

  WriteBatch batch;
  batch.Put("x", "1");
  batch.Put("y", "2");
  batch.Delete("first");
  EXPECT_THAT(store_.Write(batch, WriteOptions{.sync = true}),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_EQ(GetOrMissing("x"), "<missing>");
  EXPECT_EQ(GetOrMissing("y"), "<missing>");
  EXPECT_EQ(GetOrMissing("first"), "1");

  ASSERT_OK(store_.Write(batch, WriteOptions()));  // One shot: the third write works.
  EXPECT_EQ(GetOrMissing("x"), "1");
  EXPECT_EQ(store_.writes(), 2u);
  EXPECT_EQ(store_.synced_writes(), 0u);
}

TEST_F(FaultInjectingStoreTest, FailNthWriteCountsFromNow) {
  ASSERT_OK(Put("a", "1"));
  ASSERT_OK(Put("b", "2"));
  store_.FailNthWrite(1, absl::InternalError("boom"));
  EXPECT_THAT(Put("c", "3"), StatusIs(absl::StatusCode::kInternal));
  EXPECT_EQ(GetOrMissing("c"), "<missing>");
  EXPECT_OK(Put("c", "3"));
}

TEST_F(FaultInjectingStoreTest, FailWritesAfterFailsEveryLaterWriteUntilCleared) {
  store_.FailWritesAfter(2, absl::UnavailableError("read-only file system"));
  EXPECT_OK(Put("a", "1"));
  EXPECT_OK(Put("b", "2"));
  EXPECT_THAT(Put("c", "3"), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(Delete("a"), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_EQ(GetOrMissing("c"), "<missing>");
  EXPECT_EQ(GetOrMissing("a"), "1");

  store_.ClearWriteFaults();
  EXPECT_OK(Put("c", "3"));
  EXPECT_EQ(GetOrMissing("c"), "3");
  EXPECT_EQ(store_.writes(), 3u);
}

TEST_F(FaultInjectingStoreTest, FailWritesAfterZeroFailsTheNextWrite) {
  store_.FailWritesAfter(0, absl::InternalError("no"));
  EXPECT_THAT(Put("a", "1"), StatusIs(absl::StatusCode::kInternal));
  EXPECT_EQ(store_.writes(), 0u);
}

TEST_F(FaultInjectingStoreTest, CorruptReadsOfReturnsGarbageForThatKeyOnly) {
  const std::string head = "head-value-protobuf";
  ASSERT_OK(Put("head", head));
  ASSERT_OK(Put("other", "fine"));
  store_.CorruptReadsOf("head");
  store_.CorruptReadsOf("missing");

  ASSERT_OK_AND_ASSIGN(std::string corrupt, store_.Get("head"));
  EXPECT_THAT(corrupt, Ne(head));
  EXPECT_THAT(corrupt, StartsWith("\xff"));
  EXPECT_NE(corrupt.size(), head.size());
  ASSERT_OK_AND_ASSIGN(std::string again, store_.Get("head"));
  EXPECT_EQ(again, corrupt);  // Deterministic.
  EXPECT_EQ(GetOrMissing("other"), "fine");
  EXPECT_THAT(store_.Get("missing"), HasErrorKind(ErrorKind::kNotFound));
  EXPECT_EQ(store_.base().Get("head").value_or(""), head);  // Stored bytes are intact.

  std::unique_ptr<StoreIterator> it = store_.NewIterator(KeyRange{});
  it->Seek("");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "head");
  EXPECT_EQ(it->value(), corrupt);
  it->Next();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value(), "fine");

  store_.ClearCorruptReads();
  EXPECT_EQ(GetOrMissing("head"), head);
}

TEST_F(FaultInjectingStoreTest, CorruptEmptyValueIsNotEmpty) {
  ASSERT_OK(Put("empty", ""));
  store_.CorruptReadsOf("empty");
  ASSERT_OK_AND_ASSIGN(std::string corrupt, store_.Get("empty"));
  EXPECT_FALSE(corrupt.empty());
}

TEST_F(FaultInjectingStoreTest, SimulateCrashDropsUnsyncedWrites) {
  ASSERT_OK(Put("a", "1"));
  ASSERT_OK(Put("c", "3", /*sync=*/true));  // Makes "a" durable too.
  ASSERT_OK(Put("a", "changed"));
  ASSERT_OK(Put("b", "new"));
  ASSERT_OK(Delete("c"));
  ASSERT_OK(Put("a", "changed again"));
  EXPECT_EQ(GetOrMissing("a"), "changed again");  // Unsynced writes are readable.
  EXPECT_EQ(GetOrMissing("c"), "<missing>");

  ASSERT_OK(store_.SimulateCrash());
  EXPECT_EQ(GetOrMissing("a"), "1");
  EXPECT_EQ(GetOrMissing("b"), "<missing>");
  EXPECT_EQ(GetOrMissing("c"), "3");
}

TEST_F(FaultInjectingStoreTest, SyncedWriteMakesEarlierUnsyncedWritesDurable) {
  ASSERT_OK(Put("a", "1"));
  ASSERT_OK(Put("b", "2"));
  ASSERT_OK(Put("c", "3", /*sync=*/true));
  ASSERT_OK(Put("d", "4"));
  ASSERT_OK(store_.SimulateCrash());
  EXPECT_EQ(GetOrMissing("a"), "1");
  EXPECT_EQ(GetOrMissing("b"), "2");
  EXPECT_EQ(GetOrMissing("c"), "3");
  EXPECT_EQ(GetOrMissing("d"), "<missing>");
  EXPECT_EQ(store_.writes(), 4u);
  EXPECT_EQ(store_.synced_writes(), 1u);
}

TEST_F(FaultInjectingStoreTest, SimulateCrashUndoesBatchesWithRepeatedKeys) {
  ASSERT_OK(Put("k", "durable", /*sync=*/true));
  WriteBatch batch;
  batch.Put("k", "x");
  batch.Delete("k");
  batch.Put("k", "y");
  batch.Put("fresh", "1");
  batch.Delete("fresh");
  ASSERT_OK(store_.Write(batch, WriteOptions()));
  EXPECT_EQ(GetOrMissing("k"), "y");

  ASSERT_OK(store_.SimulateCrash());
  EXPECT_EQ(GetOrMissing("k"), "durable");
  EXPECT_EQ(GetOrMissing("fresh"), "<missing>");

  ASSERT_OK(store_.SimulateCrash());  // Nothing left to undo.
  EXPECT_EQ(GetOrMissing("k"), "durable");
}

TEST_F(FaultInjectingStoreTest, FailedWritesAreNotUndoneByACrash) {
  ASSERT_OK(Put("a", "1", /*sync=*/true));
  store_.FailNthWrite(1, absl::InternalError("boom"));
  EXPECT_FALSE(Put("a", "2").ok());
  ASSERT_OK(store_.SimulateCrash());
  EXPECT_EQ(GetOrMissing("a"), "1");
}

TEST_F(FaultInjectingStoreTest, CloseThenCrashOrReopen) {
  ASSERT_OK(Put("a", "1", /*sync=*/true));
  ASSERT_OK(Put("b", "2"));
  ASSERT_OK(store_.Close());
  EXPECT_THAT(store_.Get("a"), HasErrorKind(ErrorKind::kClosed));
  EXPECT_THAT(Put("c", "3"), HasErrorKind(ErrorKind::kClosed));
  EXPECT_THAT(store_.ApproximateSize(KeyRange{}), HasErrorKind(ErrorKind::kClosed));
  EXPECT_THAT(store_.NewIterator(KeyRange{})->status(), HasErrorKind(ErrorKind::kClosed));
  EXPECT_OK(store_.Close());

  store_.Reopen();
  EXPECT_EQ(GetOrMissing("b"), "2");  // A clean restart keeps unsynced writes...
  ASSERT_OK(store_.Close());
  ASSERT_OK(store_.SimulateCrash());  // ...a crash does not, and reopens.
  EXPECT_EQ(GetOrMissing("a"), "1");
  EXPECT_EQ(GetOrMissing("b"), "<missing>");
}

// The durable driver tells a killed process from a stopped machine by the
// store's lifetime: a crash starts a new one, a close and reopen do not.
TEST_F(FaultInjectingStoreTest, ACrashStartsANewLifetimeAndACloseDoesNot) {
  const std::string first = store_.UnsyncedWritesLifetime();
  EXPECT_NE(first, "");
  ASSERT_OK(store_.Close());
  store_.Reopen();
  EXPECT_EQ(store_.UnsyncedWritesLifetime(), first);
  ASSERT_OK(store_.SimulateCrash());
  const std::string second = store_.UnsyncedWritesLifetime();
  EXPECT_NE(second, first);
  FaultInjectingStore other(std::make_unique<MemoryStore>());
  EXPECT_NE(other.UnsyncedWritesLifetime(), second);
  store_.SetLifetimeUnknown();
  EXPECT_EQ(store_.UnsyncedWritesLifetime(), "");
}

TEST(FaultInjectingStoreNonOwningTest, WritesReachTheBase) {
  MemoryStore base;
  {
    FaultInjectingStore store(&base);
    WriteBatch batch;
    batch.Put("k", "v");
    ASSERT_OK(store.Write(batch, WriteOptions()));
    EXPECT_EQ(&store.base(), &base);
  }
  ASSERT_OK_AND_ASSIGN(std::string value, base.Get("k"));  // Base outlives the wrapper.
  EXPECT_EQ(value, "v");
}

TEST(FaultInjectingStoreLevelDbTest, CrashLossPersistsAcrossReopen) {
  ::keel::testing::TempDir dir;
  Config config{{"path", dir.Sub("db")}};
  {
    ASSERT_OK_AND_ASSIGN(auto base, LevelDbStore::Open(config));
    FaultInjectingStore store(std::move(base));
    WriteBatch batch;
    batch.Put("kept", "1");
    ASSERT_OK(store.Write(batch, WriteOptions{.sync = true}));
    batch.Clear();
    batch.Put("lost", "2");
    batch.Delete("kept");
    ASSERT_OK(store.Write(batch, WriteOptions()));
    ASSERT_OK(store.SimulateCrash());
  }
  ASSERT_OK_AND_ASSIGN(auto store, LevelDbStore::Open(config));
  std::unique_ptr<StoreIterator> it = store->NewIterator(KeyRange{});
  it->Seek("");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "kept");
  EXPECT_EQ(it->value(), "1");
  it->Next();
  EXPECT_FALSE(it->Valid());
}

}  // namespace
}  // namespace keel
