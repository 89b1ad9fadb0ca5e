// LevelDB-specific behaviour: options, persistence, error mapping.
#include "keel/statestore/leveldb/leveldb_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "keel/statestore/state_store.h"
#include "keel/tests/testing/file_size_limit.h"
#include "keel/tests/testing/status_matchers.h"
#include "keel/tests/testing/temp_dir.h"

namespace keel {
namespace {

using ::keel::testing::HasErrorKind;
using ::keel::testing::StatusIs;
using ::testing::HasSubstr;

class LevelDbStoreTest : public ::testing::Test {
 protected:
  Config ConfigFor(const std::string& name) {
    Config config;
    config.Set("path", dir_.Sub(name));
    return config;
  }

  static void Put(StateStore& store, absl::string_view key, absl::string_view value,
                  bool sync = false) {
    WriteBatch batch;
    batch.Put(key, value);
    ASSERT_OK(store.Write(batch, WriteOptions{.sync = sync}));
  }

  // A write that fails for real: the process may not grow a file past the
  // current log (the store must not preallocate its logs).
  absl::Status FailingWrite(StateStore& store, absl::string_view key) {
    ::keel::testing::ScopedFileSizeLimit cap(::keel::testing::NewestLogBytes(dir_.Sub("db")) + 8);
    WriteBatch batch;
    batch.Put(key, std::string(100, 'x'));
    return store.Write(batch, WriteOptions());
  }

  ::keel::testing::TempDir dir_;
};

TEST_F(LevelDbStoreTest, DataSurvivesCloseAndReopen) {
  Config config = ConfigFor("db");
  {
    ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
    Put(*store, "synced", "1", /*sync=*/true);
    Put(*store, "unsynced", "2");
    WriteBatch batch;
    batch.Put("doomed", "x");
    batch.Delete("doomed");
    ASSERT_OK(store->Write(batch, WriteOptions()));
    ASSERT_OK(store->Close());
  }
  ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
  ASSERT_OK_AND_ASSIGN(std::string value, store->Get("synced"));
  EXPECT_EQ(value, "1");
  ASSERT_OK_AND_ASSIGN(value, store->Get("unsynced"));
  EXPECT_EQ(value, "2");
  EXPECT_THAT(store->Get("doomed"), HasErrorKind(ErrorKind::kNotFound));
}

// LevelDB hands each write to the kernel before it returns, so unsynced
// writes last as long as the kernel's page cache: its boot.
TEST_F(LevelDbStoreTest, UnsyncedWritesLastForTheKernelsBoot) {
  std::ifstream file("/proc/sys/kernel/random/boot_id");
  std::string boot_id;
  ASSERT_TRUE(std::getline(file, boot_id));
  Config config = ConfigFor("db");
  {
    ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
    EXPECT_EQ(store->UnsyncedWritesLifetime(), boot_id);
  }
  ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
  EXPECT_EQ(store->UnsyncedWritesLifetime(), boot_id);
  EXPECT_EQ(boot_id.size(), 36u) << boot_id;  // A UUID.
}

// A write LevelDB failed would leave its log misaligned, so that recovery
// drops later records: the store takes no write after it until reopened.
// And the reopened store is in a new lifetime: a failed sync may have cost
// earlier unsynced writes. The failure is real: the process may not grow a
// file past its log.
TEST_F(LevelDbStoreTest, AFailedWriteIsTheLastTheStoreTakes) {
  Config config = ConfigFor("db");
  config.Set("preallocate_log", "false");
  std::string lifetime_before;
  {
    ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
    lifetime_before = store->UnsyncedWritesLifetime();
    Put(*store, "before", "1");
    EXPECT_OK(store->WriteStatus());
    const absl::Status failed = FailingWrite(*store, "failed");
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(store->WriteStatus().code(), failed.code());
    WriteBatch after;
    after.Put("after", "2");
    const absl::Status refused = store->Write(after, WriteOptions());
    EXPECT_EQ(refused.code(), failed.code());
    EXPECT_THAT(refused.message(), HasSubstr("an earlier write failed"));
    ASSERT_OK_AND_ASSIGN(std::string value, store->Get("before"));
    EXPECT_EQ(value, "1");
  }
  std::string lifetime_after;
  {
    ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
    ASSERT_OK_AND_ASSIGN(std::string value, store->Get("before"));
    EXPECT_EQ(value, "1");
    EXPECT_THAT(store->Get("after"), HasErrorKind(ErrorKind::kNotFound));
    EXPECT_OK(store->WriteStatus());
    Put(*store, "after", "2");  // Reopened, it takes writes again.
    lifetime_after = store->UnsyncedWritesLifetime();
  }
  EXPECT_NE(lifetime_after, lifetime_before);
  EXPECT_THAT(lifetime_after, ::testing::StartsWith(lifetime_before));  // The same boot.
  {
    ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
    EXPECT_EQ(store->UnsyncedWritesLifetime(), lifetime_after) << "no failure since";
    ASSERT_FALSE(FailingWrite(*store, "failed again").ok());
  }
  ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
  EXPECT_NE(store->UnsyncedWritesLifetime(), lifetime_after) << "a second failure, a new lifetime";
}

// A failure whose token could not be written (the file was created, the
// disk refused its bytes) leaves the lifetime unknown, not the boot's.
TEST_F(LevelDbStoreTest, AFailureRecordWithoutItsTokenMakesTheLifetimeUnknown) {
  Config config = ConfigFor("db");
  { ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config)); }
  std::ofstream(std::filesystem::path(dir_.Sub("db")) / "KEEL-WRITE-FAILURE").flush();
  ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
  EXPECT_EQ(store->UnsyncedWritesLifetime(), "");
}

TEST_F(LevelDbStoreTest, DestructorClosesTheDatabase) {
  Config config = ConfigFor("db");
  {
    ASSERT_OK_AND_ASSIGN(auto store, LevelDbStore::Open(config));
    Put(*store, "k", "v");
  }  // No Close().
  ASSERT_OK_AND_ASSIGN(auto store, LevelDbStore::Open(config));
  ASSERT_OK_AND_ASSIGN(std::string value, store->Get("k"));
  EXPECT_EQ(value, "v");
}

TEST_F(LevelDbStoreTest, CreatesMissingParentDirectories) {
  ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", ConfigFor("a/b/c/db")));
  Put(*store, "k", "v");
  EXPECT_TRUE(std::filesystem::exists(dir_.Sub("a/b/c/db/CURRENT")));
}

TEST_F(LevelDbStoreTest, SecondOpenOfTheSamePathIsUnavailable) {
  Config config = ConfigFor("db");
  ASSERT_OK_AND_ASSIGN(auto first, OpenStore("leveldb", config));
  auto second = OpenStore("leveldb", config);
  EXPECT_THAT(second, StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(second.status().message(), HasSubstr(dir_.Sub("db")));

  ASSERT_OK(first->Close());
  EXPECT_OK(OpenStore("leveldb", config));  // The lock is released by Close().
}

TEST_F(LevelDbStoreTest, MissingPathIsInvalidArgumentNamingIt) {
  auto store = OpenStore("leveldb", Config());
  EXPECT_THAT(store, HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(store.status().message(), HasSubstr("path"));

  store = OpenStore("leveldb", Config{{"path", ""}});
  EXPECT_THAT(store, HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(store.status().message(), HasSubstr("path"));
}

TEST_F(LevelDbStoreTest, InvalidOptionsAreInvalidArgumentNamingTheOption) {
  // write_buffer_bytes=1 is below LevelDB's 64 KiB minimum.
  const std::pair<std::string, std::string> bad_options[] = {
      {"compression", "zstd"},       {"block_cache_bytes", "lots"}, {"block_cache_bytes", "-1"},
      {"write_buffer_bytes", "12x"}, {"write_buffer_bytes", "1"},   {"create_if_missing", "maybe"},
      {"preallocate_log", "often"}};
  for (const auto& [option, value] : bad_options) {
    SCOPED_TRACE(option + "=" + value);
    Config config = ConfigFor("db");
    config.Set(option, value);
    auto store = OpenStore("leveldb", config);
    EXPECT_THAT(store, HasErrorKind(ErrorKind::kInvalidArgument));
    EXPECT_THAT(store.status().message(), HasSubstr(option));
  }
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("db")));  // Rejected before touching disk.
}

TEST_F(LevelDbStoreTest, AcceptsEveryValidOption) {
  Config config = ConfigFor("db");
  config.Set("compression", "none");
  config.Set("block_cache_bytes", "1048576");
  config.Set("write_buffer_bytes", "65536");
  config.Set("create_if_missing", "true");
  config.Set("preallocate_log", "false");
  ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
  Put(*store, "k", "v");
  ASSERT_OK_AND_ASSIGN(std::string value, store->Get("k"));
  EXPECT_EQ(value, "v");
}

TEST_F(LevelDbStoreTest, CreateIfMissingFalseRefusesANewDatabase) {
  Config config = ConfigFor("db");
  config.Set("create_if_missing", "false");
  auto store = OpenStore("leveldb", config);
  EXPECT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr(dir_.Sub("db")));

  { ASSERT_OK(OpenStore("leveldb", ConfigFor("db"))); }  // Create it.
  EXPECT_OK(OpenStore("leveldb", config));
}

TEST_F(LevelDbStoreTest, ApproximateSizeCountsFlushedData) {
  Config config = ConfigFor("db");
  config.Set("compression", "none");
  const std::string value(1000, 'v');
  {
    ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
    for (int i = 0; i < 400; ++i) {
      std::string key = "a/";
      AppendBigEndian64(key, i);
      Put(*store, key, value);
    }
  }
  ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));  // Reopen flushes the log.
  ASSERT_OK_AND_ASSIGN(uint64_t all, store->ApproximateSize(KeyRange{}));
  ASSERT_OK_AND_ASSIGN(uint64_t prefix, store->ApproximateSize(KeyRange::Prefix("a/")));
  ASSERT_OK_AND_ASSIGN(uint64_t after, store->ApproximateSize(KeyRange{"b", ""}));
  EXPECT_GE(all, 300u * 1000u);
  EXPECT_GE(prefix, 300u * 1000u);
  EXPECT_EQ(after, 0u);
}

TEST_F(LevelDbStoreTest, CorruptTableIsDataLoss) {
  Config config = ConfigFor("db");
  config.Set("compression", "none");
  const std::string marker = "MARKER-VALUE-0123456789";
  {
    ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
    Put(*store, "k", marker);
  }
  { ASSERT_OK(OpenStore("leveldb", config)); }  // Moves the value into a table file.

  bool corrupted = false;
  for (const auto& entry : std::filesystem::directory_iterator(dir_.Sub("db"))) {
    if (entry.path().extension() != ".ldb") continue;
    std::fstream file(entry.path(), std::ios::in | std::ios::out | std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    size_t at = bytes.find(marker);
    if (at == std::string::npos) continue;
    file.seekp(static_cast<std::streamoff>(at));
    file.write("XX", 2);
    corrupted = true;
  }
  ASSERT_TRUE(corrupted) << "no table file holds the value";

  ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
  auto value = store->Get("k");
  EXPECT_THAT(value, StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(value.status().message(), HasSubstr(dir_.Sub("db")));

  std::unique_ptr<StoreIterator> it = store->NewIterator(KeyRange{});
  it->Seek("");
  EXPECT_FALSE(it->Valid());
  EXPECT_THAT(it->status(), StatusIs(absl::StatusCode::kDataLoss));
}

TEST_F(LevelDbStoreTest, LiveIteratorKeepsTheDatabaseUntilDestroyed) {
  Config config = ConfigFor("db");
  ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
  Put(*store, "k", "v");
  std::unique_ptr<StoreIterator> it = store->NewIterator(KeyRange{});
  ASSERT_OK(store->Close());
  EXPECT_FALSE(OpenStore("leveldb", config).ok());  // Still locked by the iterator.
  it->Seek("");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value(), "v");
  it.reset();
  EXPECT_OK(OpenStore("leveldb", config));
}

}  // namespace
}  // namespace keel
