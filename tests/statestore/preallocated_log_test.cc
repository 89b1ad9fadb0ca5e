// The leveldb store's preallocated write-ahead logs: what a synced write
// stored is what a crashed database recovers, whether the log it went to was
// zero-filled in advance, outgrew that, or was appended to as usual.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "keel/statestore/leveldb/leveldb_store.h"
#include "keel/statestore/leveldb/preallocated_log_env.h"
#include "keel/statestore/state_store.h"
#include "keel/tests/testing/file_size_limit.h"
#include "keel/tests/testing/status_matchers.h"
#include "keel/tests/testing/temp_dir.h"

namespace keel {
namespace {

namespace fs = std::filesystem;

// The write buffer of these tests, and the log size it gives: an eighth more.
constexpr char kWriteBuffer[] = "1048576";
constexpr uint64_t kPreallocation = (uint64_t{1} << 20) + (uint64_t{1} << 20) / 8;
// A log's spare is made once the log carried 16 synced writes.
constexpr int kSyncedWritesPerFill = 16;
// Keys a FillSynced writes.
constexpr int kKeysPerFill = 1 + kSyncedWritesPerFill;

class PreallocatedLogTest : public ::testing::Test {
 protected:
  Config ConfigFor(const std::string& name) {
    Config config;
    config.Set("path", dir_.Sub(name));
    config.Set("write_buffer_bytes", kWriteBuffer);
    return config;
  }

  // Waits (bounded) for the background thread to do what `done` checks;
  // whether it did. Logs come and go meanwhile (LevelDB starts one when a
  // memtable fills and deletes it once flushed), so a state seen once is
  // not checked again.
  template <typename Done>
  static bool WaitUntil(Done done) {
    for (int i = 0; i < 6000; ++i) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  // Every log has the preallocated size (a plain one's blocks are reserved
  // too, so that it can be written through a map): a log that came from a
  // spare is the only one left, and newer than the log the store opened
  // with.
  bool InPreallocatedLog(const Config& config, uint64_t opened_with) {
    const std::string path = config.GetString("path", "");
    return LogSizes(path) == std::vector{kPreallocation} && NewestLogNumber(path) > opened_with;
  }

  // The number of the newest log in `path` ("000012.log": 12), 0 for none.
  static uint64_t NewestLogNumber(const std::string& path) {
    uint64_t newest = 0;
    for (const fs::directory_entry& entry : fs::directory_iterator(path)) {
      if (entry.path().extension() != ".log") continue;
      newest = std::max<uint64_t>(newest, std::stoull(entry.path().stem().string()));
    }
    return newest;
  }

  // Fills over a quarter of the current log with synced writes, enough of
  // them for the log's spare to be made: the value `name` and
  // kSyncedWritesPerFill small ones, "<name>-<i>".
  static void FillSynced(StateStore& store, const std::string& name) {
    PutSynced(store, name, Filler());
    for (int i = 0; i < kSyncedWritesPerFill; ++i) PutSynced(store, absl::StrCat(name, "-", i), "s");
  }

  // Leaves a spare log for the next open, so that it starts in a
  // preallocated log: filling the first, plain log moves the database to a
  // preallocated one, and filling that makes the next spare.
  void PrepareSpare(const Config& config) {
    ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
    const uint64_t first = NewestLogNumber(config.GetString("path", ""));
    FillSynced(*store, "prepared1");
    ASSERT_TRUE(WaitUntil([&] { return InPreallocatedLog(config, first); }))
        << "the first log was not replaced";
    FillSynced(*store, "prepared2");
    const fs::path spare = SparePath(config);
    ASSERT_TRUE(WaitUntil([&] { return fs::exists(spare); })) << "no spare log was made";
    ASSERT_OK(store->Close());
  }

  static fs::path SparePath(const Config& config) {
    return fs::path(config.GetString("path", "")) / kSpareLogName;
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

  // The sizes of the logs in `path`. LevelDB may delete an obsolete log
  // meanwhile (after a rotation); a log gone before its size is read is
  // left out.
  static std::vector<uint64_t> LogSizes(const std::string& path) {
    std::vector<uint64_t> sizes;
    for (const fs::directory_entry& entry : fs::directory_iterator(path)) {
      if (entry.path().extension() != ".log") continue;
      std::error_code vanished;
      const uintmax_t size = fs::file_size(entry.path(), vanished);
      if (!vanished) sizes.push_back(size);
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
  EXPECT_EQ(CountKeys(*reopened), kKeys + 2 * kKeysPerFill);
}

TEST_F(PreallocatedLogTest, AFreshDatabaseMovesToAPreallocatedLogAndKeepsEveryWrite) {
  Config config = ConfigFor("db");
  ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
  const uint64_t first = NewestLogNumber(config.GetString("path", ""));
  // Filling a quarter of the first, plain log with synced writes makes a
  // spare, and the database moves to it without waiting for the log to fill.
  FillSynced(*store, "filler");
  ASSERT_TRUE(WaitUntil([&] { return InPreallocatedLog(config, first); }));
  for (int i = 0; i < 100; ++i) PutSynced(*store, absl::StrCat("key", i), absl::StrCat("v", i));
  std::string image = CrashImage(config);

  Config recovered;
  recovered.Set("path", image);
  ASSERT_OK_AND_ASSIGN(auto reopened, OpenStore("leveldb", recovered));
  ExpectValue(*reopened, "filler", Filler());
  for (int i = 0; i < 100; ++i) ExpectValue(*reopened, absl::StrCat("key", i), absl::StrCat("v", i));
  EXPECT_EQ(CountKeys(*reopened), 100 + kKeysPerFill);
}

TEST_F(PreallocatedLogTest, WritesLargerThanThePreallocationAreKeptWhole) {
  Config config = ConfigFor("db");
  PrepareSpare(config);
  ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
  EXPECT_FALSE(fs::exists(SparePath(config)));  // The first log took it.
  ASSERT_THAT(LogSizes(config.GetString("path", "")), ::testing::ElementsAre(kPreallocation));
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
  EXPECT_EQ(CountKeys(*reopened), 51 + 2 * kKeysPerFill);
}

TEST_F(PreallocatedLogTest, PreallocateLogFalseAppendsToPlainLogs) {
  Config config = ConfigFor("db");
  PrepareSpare(config);
  config.Set("preallocate_log", "false");
  ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
  PutSynced(*store, "k", "v");
  // The spare left by the first run is not used (the log holds one record)
  // and not kept.
  EXPECT_THAT(LogSizes(dir_.Sub("db")), ::testing::ElementsAre(::testing::Lt(4096)));
  EXPECT_FALSE(fs::exists(SparePath(config)));
  ASSERT_OK(store->Close());
  ASSERT_OK_AND_ASSIGN(store, OpenStore("leveldb", config));
  ExpectValue(*store, "k", "v");
}

TEST_F(PreallocatedLogTest, ASpareOfAnotherSizeIsRemovedNotUsed) {
  Config config = ConfigFor("db");
  PrepareSpare(config);
  config.Set("write_buffer_bytes", "2097152");  // Logs of 2.25 MiB from now on.
  ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
  PutSynced(*store, "k", "v");
  // A plain log, its blocks reserved at the new size: not the old spare.
  EXPECT_THAT(LogSizes(dir_.Sub("db")), ::testing::ElementsAre(uint64_t{2359296}));
  EXPECT_FALSE(fs::exists(SparePath(config)));
  ExpectValue(*store, "k", "v");
}

TEST_F(PreallocatedLogTest, ATornRecordBeforeTheZeroTailLosesOnlyThatRecord) {
  Config config = ConfigFor("db");
  PrepareSpare(config);
  ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
  for (int i = 0; i < 20; ++i) PutSynced(*store, absl::StrCat("key", i), absl::StrCat("v", i));
  std::string image = CrashImage(config);
  // What a crash in the middle of an unsynced write can leave after the last
  // record: a header whose checksum does not match, part of its payload,
  // then the zeros.
  std::vector<uint64_t> sizes = LogSizes(image);
  ASSERT_THAT(sizes, ::testing::ElementsAre(kPreallocation));
  fs::path log;
  for (const fs::directory_entry& entry : fs::directory_iterator(image)) {
    if (entry.path().extension() == ".log") log = entry.path();
  }
  std::fstream file(log, std::ios::in | std::ios::out | std::ios::binary);
  std::string contents((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const size_t end = contents.find_last_not_of('\0') + 1;
  const std::string torn = std::string("\x12\x34\x56\x78\x40\x00\x01", 7) + "partial payload";
  file.seekp(static_cast<std::streamoff>(end));
  file.write(torn.data(), static_cast<std::streamsize>(torn.size()));
  file.close();

  Config recovered;
  recovered.Set("path", image);
  ASSERT_OK_AND_ASSIGN(auto reopened, OpenStore("leveldb", recovered));
  for (int i = 0; i < 20; ++i) ExpectValue(*reopened, absl::StrCat("key", i), absl::StrCat("v", i));
  EXPECT_EQ(CountKeys(*reopened), 20 + 2 * kKeysPerFill);
}

// Records go into the log through a shared map: what a killed process
// leaves in the file (the page cache) holds every write that returned,
// synced or not.
TEST_F(PreallocatedLogTest, UnsyncedWritesAreInTheFileOnceTheyReturn) {
  const Config config = ConfigFor("db");
  ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
  for (int i = 0; i < 300; ++i) {
    WriteBatch batch;
    batch.Put(absl::StrCat("key", i), std::string(1000, 'u'));
    ASSERT_OK(store->Write(batch, WriteOptions{.sync = false}));
  }
  std::string image = CrashImage(config);

  Config recovered;
  recovered.Set("path", image);
  ASSERT_OK_AND_ASSIGN(auto reopened, OpenStore("leveldb", recovered));
  EXPECT_EQ(CountKeys(*reopened), 300);
  ExpectValue(*reopened, "key299", std::string(1000, 'u'));
}

// A log whose blocks cannot be reserved (here the process may not grow a
// file that far, as on a full disk) is not mapped, where a store into an
// unreserved block would raise SIGBUS: it is written with pwrite, grows as
// records come, and keeps them.
TEST_F(PreallocatedLogTest, ALogThatCannotReserveItsBlocksIsWrittenAsBefore) {
  const Config config = ConfigFor("db");
  {
    ::keel::testing::ScopedFileSizeLimit cap(kPreallocation / 2);
    ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
    for (int i = 0; i < 20; ++i) PutSynced(*store, absl::StrCat("key", i), absl::StrCat("v", i));
    EXPECT_THAT(LogSizes(dir_.Sub("db")), ::testing::ElementsAre(::testing::Lt(4096)));
    ASSERT_OK(store->Close());
  }
  ASSERT_OK_AND_ASSIGN(auto reopened, OpenStore("leveldb", config));
  for (int i = 0; i < 20; ++i) ExpectValue(*reopened, absl::StrCat("key", i), absl::StrCat("v", i));
}

// LevelDB starts a new log without syncing the old one. A synced write then
// syncs the old logs still there and skips those LevelDB deleted once their
// memtables were in synced tables: it succeeds, and everything is kept.
TEST_F(PreallocatedLogTest, ASyncedWriteAfterUnsyncedLogsRolledOverSucceeds) {
  const Config config = ConfigFor("rolled");
  {
    ASSERT_OK_AND_ASSIGN(auto store, OpenStore("leveldb", config));
    for (int i = 0; i < 8; ++i) {  // Four write buffers: logs start and go.
      WriteBatch batch;
      batch.Put(absl::StrCat("k", i), std::string(512 << 10, 'v'));
      ASSERT_OK(store->Write(batch, WriteOptions{.sync = false}));
    }
    WriteBatch last;
    last.Put("last", "x");
    ASSERT_OK(store->Write(last, WriteOptions{.sync = true}));
    ASSERT_OK(store->Close());
  }
  ASSERT_OK_AND_ASSIGN(auto reopened, OpenStore("leveldb", config));
  EXPECT_EQ(CountKeys(*reopened), 9);
}

}  // namespace
}  // namespace keel
