// The leveldb store's table files: LevelDB's flush after every data block
// leaves the bytes in the file's buffer, and only a full buffer, a sync or
// a close writes them; every other file is flushed as LevelDB asks.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "leveldb/env.h"
#include "keel/statestore/leveldb/table_writes_env.h"
#include "keel/tests/testing/temp_dir.h"

namespace keel {
namespace {

namespace fs = std::filesystem;

class TableWritesEnvTest : public ::testing::Test {
 protected:
  // Opens `name` in the test's directory, appends `data` and flushes it.
  std::unique_ptr<leveldb::WritableFile> AppendAndFlush(const std::string& name,
                                                        const std::string& data) {
    leveldb::WritableFile* file = nullptr;
    EXPECT_TRUE(env_.NewWritableFile(Path(name), &file).ok());
    EXPECT_TRUE(file->Append(data).ok());
    EXPECT_TRUE(file->Flush().ok());
    return std::unique_ptr<leveldb::WritableFile>(file);
  }

  std::string Path(const std::string& name) { return dir_.Sub(name); }

  testing::TempDir dir_;
  TableWritesEnv env_{leveldb::Env::Default()};
};

TEST_F(TableWritesEnvTest, ATablesFlushWritesNothingItsCloseWritesAll) {
  std::unique_ptr<leveldb::WritableFile> table = AppendAndFlush("000007.ldb", "block");
  EXPECT_EQ(fs::file_size(Path("000007.ldb")), 0u);
  ASSERT_TRUE(table->Close().ok());
  EXPECT_EQ(fs::file_size(Path("000007.ldb")), 5u);
}

TEST_F(TableWritesEnvTest, ATablesSyncWritesAll) {
  std::unique_ptr<leveldb::WritableFile> table = AppendAndFlush("000008.sst", "block");
  ASSERT_TRUE(table->Sync().ok());
  EXPECT_EQ(fs::file_size(Path("000008.sst")), 5u);
  ASSERT_TRUE(table->Close().ok());
}

// A log's flush is what lets an unsynced write outlive the process.
TEST_F(TableWritesEnvTest, OtherFilesAreFlushedWhenAsked) {
  for (const std::string name : {"000009.log", "MANIFEST-000002"}) {
    std::unique_ptr<leveldb::WritableFile> file = AppendAndFlush(name, "record");
    EXPECT_EQ(fs::file_size(Path(name)), 6u) << name;
    ASSERT_TRUE(file->Close().ok());
  }
}

}  // namespace
}  // namespace keel
