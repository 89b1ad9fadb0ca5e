// The leveldb store's preallocated write-ahead logs: what a synced write
// stored is what a crashed database recovers, whether the log it went to was
// zero-filled in advance, outgrew that, or was appended to as usual.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "statestore/leveldb/leveldb_store.h"
#include "statestore/leveldb/preallocated_log_env.h"
#include "statestore/state_store.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

namespace keel {
namespace {

namespace fs = std::filesystem;

// The write buffer of these tests, and the log size it gives: an eighth more.
constexpr char kWriteBuffer[] = "1048576";
constexpr uint64_t kPreallocation = (uint64_t{1} << 20) + (uint64_t{1} << 20) / 8;

class PreallocatedLogTest : public ::testing::Test {
 protected:
  Config ConfigFor(const std::string& name) {
    Config config;
    config.Set("path", dir_.Sub(name));
    config.Set("write_buffer_bytes", kWriteBuffer);
    return config;
  }

  // Waits (bounded) for the background thread to do what `done` checks.
  template <typename Done>
  static void WaitUntil(Done done) {
    for (int i = 0; i < 6000 && !done(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  bool InPreallocatedLog(const Config& config) {
    return LogSizes(config.GetString("path", "")) == std::vector{kPreallocation};
  }

  // Leaves a spare log for the next open, so that it starts in a
  // preallocated log: a synced write filling over half of the first, plain
  // log moves the database to a preallocated one, and filling half of that
  // makes the next spare.
  void PrepareSpare(const Config& config) {
    ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
    PutSynced(*store, "prepared1", Filler());
    WaitUntil([&] { return InPreallocatedLog(config); });
    ASSERT_TRUE(InPreallocatedLog(config)) << "the first log was not replaced";
    PutSynced(*store, "prepared2", Filler());
    fs::path spare = fs::path(config.GetString("path", "")) / kSpareLogName;
    WaitUntil([&] { return fs::exists(spare); });
    ASSERT_TRUE(fs::exists(spare)) << "no spare log was made";
    ASSERT_OK(store->Close());
  }

  // A value that fills over half of a log.
  static std::string Filler() { return std::string(kPreallocation / 2 + 1, 'f'); }

  // What a crash leaves: the files as they are while the database is open.
  // A spare being made may be renamed meanwhile; whether it is copied does
  // not matter.
  std::string CrashImage(const Config& config) {
    std::string image = dir_.Sub("crashed");
    fs::create_directory(image);
    for (const fs::directory_entry& entry : fs::directory_iterator(config.GetString("path", ""))) {
      std::error_code vanished;
      fs::copy_file(entry.path(), fs::path(image) / entry.path().filename(), vanished);
    }
    return image;
  }

  static std::vector<uint64_t> LogSizes(const std::string& path) {
    std::vector<uint64_t> sizes;
    for (const fs::directory_entry& entry : fs::directory_iterator(path)) {
      if (entry.path().extension() == ".log") sizes.push_back(entry.file_size());
    }
    return sizes;
  }

  static void PutSynced(StateStore& store, const std::string& key, const std::string& value) {
    WriteBatch batch;
    batch.Put(key, value);
    ASSERT_OK(store.Write(batch, WriteOptions{.sync = true}));
  }

  static void ExpectValue(StateStore& store, const std::string& key, const std::string& value) {
    ASSERT_OK_AND_ASSIGN(std::string stored, store.Get(key));
    EXPECT_EQ(stored, value) << key;
  }

  static int CountKeys(StateStore& store) {
    int count = 0;
    std::unique_ptr<StoreIterator> it = store.NewIterator(KeyRange{});
    for (it->Seek(""); it->Valid(); it->Next()) ++count;
    EXPECT_OK(it->status());
    return count;
  }

  ::keel::testing::TempDir dir_;
};

TEST_F(PreallocatedLogTest, SyncedWritesInAPreallocatedLogSurviveACrash) {
  Config config = ConfigFor("db");
  PrepareSpare(config);
  ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
  constexpr int kKeys = 1000;
  for (int i = 0; i < kKeys; ++i) PutSynced(*store, absl::StrCat("key", i), absl::StrCat("v", i));
  std::string image = CrashImage(config);
  // The records sit at the front of a zero-filled log, not at its end.
  EXPECT_THAT(LogSizes(image), ::testing::ElementsAre(kPreallocation));

  Config recovered;
  recovered.Set("path", image);
  ASSERT_OK_AND_ASSIGN(auto reopened, OpenStore("leveldb", recovered));
  for (int i = 0; i < kKeys; ++i) ExpectValue(*reopened, absl::StrCat("key", i), absl::StrCat("v", i));
  ExpectValue(*reopened, "prepared1", Filler());
  ExpectValue(*reopened, "prepared2", Filler());
  EXPECT_EQ(CountKeys(*reopened), kKeys + 2);
}

TEST_F(PreallocatedLogTest, AFreshDatabaseMovesToAPreallocatedLogAndKeepsEveryWrite) {
  Config config = ConfigFor("db");
  ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
  // Fills over half of the first, plain log with a synced write: a spare is
  // made and the database moves to it without waiting for the log to fill.
  PutSynced(*store, "filler", Filler());
  WaitUntil([&] { return InPreallocatedLog(config); });
  ASSERT_TRUE(InPreallocatedLog(config));
  for (int i = 0; i < 100; ++i) PutSynced(*store, absl::StrCat("key", i), absl::StrCat("v", i));
  std::string image = CrashImage(config);

  Config recovered;
  recovered.Set("path", image);
  ASSERT_OK_AND_ASSIGN(auto reopened, OpenStore("leveldb", recovered));
  ExpectValue(*reopened, "filler", Filler());
  for (int i = 0; i < 100; ++i) ExpectValue(*reopened, absl::StrCat("key", i), absl::StrCat("v", i));
  EXPECT_EQ(CountKeys(*reopened), 101);
}

TEST_F(PreallocatedLogTest, WritesLargerThanThePreallocationAreKeptWhole) {
  Config config = ConfigFor("db");
  PrepareSpare(config);
  ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
  const std::string big(kPreallocation + (kPreallocation / 2), 'b');
  PutSynced(*store, "big", big);
  // The memtable is now over its limit: these go to later logs, preallocated
  // or not, depending on whether the next spare is ready yet.
  for (int i = 0; i < 50; ++i) PutSynced(*store, absl::StrCat("small", i), std::string(4096, 's'));
  std::string image = CrashImage(config);

  Config recovered;
  recovered.Set("path", image);
  ASSERT_OK_AND_ASSIGN(auto reopened, OpenStore("leveldb", recovered));
  ExpectValue(*reopened, "big", big);
  for (int i = 0; i < 50; ++i) ExpectValue(*reopened, absl::StrCat("small", i), std::string(4096, 's'));
  EXPECT_EQ(CountKeys(*reopened), 53);
}

TEST_F(PreallocatedLogTest, PreallocateLogFalseAppendsToPlainLogs) {
  Config config = ConfigFor("db");
  PrepareSpare(config);
  config.Set("preallocate_log", "false");
  ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
  PutSynced(*store, "k", "v");
  // The spare left by the first run is not used: the log holds one record.
  EXPECT_THAT(LogSizes(dir_.Sub("db")), ::testing::ElementsAre(::testing::Lt(4096)));
  ASSERT_OK(store->Close());
  ASSERT_OK_AND_ASSIGN(store, OpenStore("leveldb", config));
  ExpectValue(*store, "k", "v");
}

}  // namespace
}  // namespace keel
