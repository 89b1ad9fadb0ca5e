// The "fs" cold store's own promises: what a crash leaves behind is never
// an object, and the store is chosen by name with its options checked.
#include "keel/coldstore/fs/fs_cold_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "keel/coldstore/cold_store.h"
#include "keel/core/errors.h"
#include "keel/tests/testing/status_matchers.h"
#include "keel/tests/testing/temp_dir.h"

namespace keel {
namespace {

using ::keel::testing::HasErrorKind;
using ::keel::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

TEST(FsColdStoreTest, TemporaryFilesLeftByACrashAreNeitherListedNorReadable) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<FsColdStore> store, FsColdStore::Open(dir.Sub("cold")));
  ASSERT_OK(store->PutIfAbsent("stream=a/1-2.seg", "whole"));
  // What a put killed between its write and its link leaves behind.
  WriteFile(dir.Sub("cold/stream=a/.tmp-123-0-42"), "half");
  WriteFile(dir.Sub("cold/.tmp-9-1-7"), "half");
  ASSERT_OK_AND_ASSIGN(std::vector<ObjectInfo> listed, store->List(""));
  EXPECT_THAT(listed, ElementsAre(ObjectInfo{"stream=a/1-2.seg", 5}));
  EXPECT_THAT(store->Read("stream=a/.tmp-123-0-42"), HasErrorKind(ErrorKind::kInvalidArgument));

  ASSERT_OK_AND_ASSIGN(int swept, store->SweepTemporaryFiles());
  EXPECT_EQ(swept, 2);
  EXPECT_FALSE(std::filesystem::exists(dir.Sub("cold/stream=a/.tmp-123-0-42")));
  ASSERT_OK_AND_ASSIGN(std::string kept, store->Read("stream=a/1-2.seg"));
  EXPECT_EQ(kept, "whole");
}

TEST(FsColdStoreTest, APutLeavesNoTemporaryFile) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<FsColdStore> store, FsColdStore::Open(dir.Sub("cold")));
  ASSERT_OK(store->PutIfAbsent("s/obj", "bytes"));
  ASSERT_OK(store->PutIfAbsent("s/obj", "bytes"));
  EXPECT_THAT(store->PutIfAbsent("s/obj", "other"), HasErrorKind(ErrorKind::kConflict));
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.Sub("cold"))) {
    if (entry.is_regular_file()) ++files;
  }
  EXPECT_EQ(files, 1);
}

TEST(FsColdStoreTest, AnObjectWrittenByAnotherProcessIsNeverReplaced) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<FsColdStore> store, FsColdStore::Open(dir.Sub("cold")));
  std::filesystem::create_directories(dir.Sub("cold/s"));
  WriteFile(dir.Sub("cold/s/obj"), "theirs");
  EXPECT_THAT(store->PutIfAbsent("s/obj", "mine!!"), HasErrorKind(ErrorKind::kConflict));
  ASSERT_OK_AND_ASSIGN(PutOutcome outcome, store->PutIfAbsent("s/obj", "theirs"));
  EXPECT_EQ(outcome, PutOutcome::kAlreadyPresent);
  ASSERT_OK_AND_ASSIGN(std::string read, store->Read("s/obj"));
  EXPECT_EQ(read, "theirs");
}

TEST(FsColdStoreTest, IsOpenedByNameWithItsOptionsChecked) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ColdStore> store,
                       OpenColdStore("fs", Config{{"path", dir.Sub("by-name")}}));
  EXPECT_THAT(store->Describe(), HasSubstr(dir.Sub("by-name")));
  ASSERT_OK(store->PutIfAbsent("x", "y"));
  EXPECT_TRUE(std::filesystem::exists(dir.Sub("by-name/x")));

  EXPECT_THAT(OpenColdStore("fs", Config{}), HasErrorKind(ErrorKind::kInvalidArgument));
  auto typo = OpenColdStore("fs", Config{{"path", dir.path()}, {"pth", "x"}});
  EXPECT_THAT(typo, HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(typo.status().message(), HasSubstr("pth"));
  auto unknown = OpenColdStore("ftp", Config{});
  EXPECT_THAT(unknown, HasErrorKind(ErrorKind::kNotFound));
  EXPECT_THAT(unknown.status().message(), HasSubstr("fs"));
}

TEST(FsColdStoreTest, ObjectsSurviveReopening) {
  TempDir dir;
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<FsColdStore> store, FsColdStore::Open(dir.Sub("c")));
    ASSERT_OK(store->PutIfAbsent("a/b/c", "kept"));
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<FsColdStore> store, FsColdStore::Open(dir.Sub("c")));
  ASSERT_OK_AND_ASSIGN(std::string read, store->Read("a/b/c"));
  EXPECT_EQ(read, "kept");
}

}  // namespace
}  // namespace keel
