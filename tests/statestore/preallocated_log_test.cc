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

// 4 MiB, LevelDbStore's default write buffer, plus the eighth it adds.
constexpr uint64_t kDefaultPreallocation = (uint64_t{4} << 20) + (uint64_t{4} << 20) / 8;
constexpr char kPrepared[] = "prepared";

class PreallocatedLogTest : public ::testing::Test {
 protected:
  Config ConfigFor(const std::string& name) {
    Config config;
    config.Set("path", dir_.Sub(name));
    return config;
  }

  // Opens the database, makes the synced write that starts preallocation and
  // closes it once the spare log is ready, so that the next open starts in a
  // preallocated log.
  void PrepareSpare(const Config& config) {
    ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
    PutSynced(*store, kPrepared, "1");
    fs::path spare = fs::path(config.GetString("path", "")) / kSpareLogName;
    for (int i = 0; i < 6000 && !fs::exists(spare); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_TRUE(fs::exists(spare)) << "no spare log was made";
    ASSERT_OK(store->Close());
  }

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
  EXPECT_THAT(LogSizes(image), ::testing::ElementsAre(kDefaultPreallocation));

  Config recovered;
  recovered.Set("path", image);
  ASSERT_OK_AND_ASSIGN(auto reopened, OpenStore("leveldb", recovered));
  for (int i = 0; i < kKeys; ++i) ExpectValue(*reopened, absl::StrCat("key", i), absl::StrCat("v", i));
  ExpectValue(*reopened, kPrepared, "1");
  EXPECT_EQ(CountKeys(*reopened), kKeys + 1);
}

TEST_F(PreallocatedLogTest, WritesLargerThanThePreallocationAreKeptWhole) {
  Config config = ConfigFor("db");
  config.Set("write_buffer_bytes", "65536");  // Logs of 72 KiB.
  PrepareSpare(config);
  ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
  const std::string big(300 << 10, 'b');
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
  EXPECT_EQ(CountKeys(*reopened), 52);
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
