// WriteLatchEnv: once a write-ahead log write failed, no log takes another,
// whoever writes it; other files are untouched.
#include "keel/statestore/leveldb/write_latch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "keel/core/errors.h"
#include "keel/tests/testing/file_size_limit.h"
#include "keel/tests/testing/status_matchers.h"
#include "keel/tests/testing/temp_dir.h"

namespace keel {
namespace {

using ::keel::testing::HasErrorKind;
using ::testing::HasSubstr;

class WriteLatchTest : public ::testing::Test {
 protected:
  std::unique_ptr<leveldb::WritableFile> NewFile(const std::string& name) {
    leveldb::WritableFile* file = nullptr;
    EXPECT_TRUE(env_.NewWritableFile(dir_.Sub(name), &file).ok()) << name;
    return std::unique_ptr<leveldb::WritableFile>(file);
  }

  static leveldb::Status Write(leveldb::WritableFile& file, size_t bytes) {
    leveldb::Status status = file.Append(std::string(bytes, 'x'));
    return status.ok() ? file.Flush() : status;
  }

  ::keel::testing::TempDir dir_;
  WriteLatch latch_{dir_.Sub("")};
  WriteLatchEnv env_{leveldb::Env::Default(), latch_};
};

TEST_F(WriteLatchTest, AFailedLogWriteRefusesEveryLaterOne) {
  std::unique_ptr<leveldb::WritableFile> log = NewFile("000003.log");
  ASSERT_TRUE(Write(*log, 10).ok());
  EXPECT_OK(latch_.status());
  {
    ::keel::testing::ScopedFileSizeLimit cap(16);
    EXPECT_FALSE(Write(*log, 100).ok());
  }
  ASSERT_TRUE(latch_.failed());
  // Recorded for the next open the moment the log failed.
  EXPECT_THAT(WriteFailureToken(dir_.Sub("")), ::testing::Optional(::testing::SizeIs(16)));
  EXPECT_THAT(latch_.status(), HasErrorKind(ErrorKind::kUnavailable));
  EXPECT_THAT(latch_.status().message(),
              HasSubstr("no write is taken until the store is reopened"));
  // Room again, but neither this log nor the next takes a write.
  EXPECT_FALSE(Write(*log, 10).ok());
  EXPECT_FALSE(log->Sync().ok());
  std::unique_ptr<leveldb::WritableFile> next = NewFile("000005.log");
  EXPECT_FALSE(Write(*next, 10).ok());
  // Other files are LevelDB's to judge (a failed table or manifest write
  // stops LevelDB's own writes).
  std::unique_ptr<leveldb::WritableFile> manifest = NewFile("MANIFEST-000004");
  EXPECT_TRUE(Write(*manifest, 10).ok());
  EXPECT_TRUE(log->Close().ok());
}

}  // namespace
}  // namespace keel
