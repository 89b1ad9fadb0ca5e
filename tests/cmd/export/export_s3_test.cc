// `keel export` to an S3-compatible object store (s3rver, started here on
// 127.0.0.1): the objects are, name for name and byte for byte, the files
// the same export writes to a directory, and a rerun writes nothing again.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/command.h"
#include "keel/coldstore/builtin_cold_stores.h"
#include "keel/coldstore/cold_store.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/cmd/run_keel.h"
#include "keel/tests/coldstore/s3rver_process.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

using ::testing::HasSubstr;

class ExportS3Test : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(
        s3_, ::keel::testing::S3rverProcess::Start(KEEL_S3RVER_INSTALL_DIR, dir_.Sub("s3rver")));
    ASSERT_OK(daemon_.Start());
    std::unique_ptr<client::HttpClient> http = daemon_.NewClient();
    for (int i = 0; i < 60; ++i) {
      ASSERT_OK(
          Publish(*http, i % 3 == 0 ? "lake.b" : "lake.a", "t", absl::StrCat("{\"i\":", i, "}"))
              .status());
    }
  }

  // `keel export` of lake.* to `out` with `extra` flags.
  ::keel::testing::KeelRun Export(const std::string& out, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {
        "export", "--server", daemon_.address(),   "--stream", "lake.*",
        "--out",  out,        "--max-file-events", "7",        "--compression",
        "zstd"};
    args.insert(args.end(), extra.begin(), extra.end());
    return ::keel::testing::RunKeel(std::move(args));
  }
  std::vector<std::string> S3Options() const {
    std::vector<std::string> flags;
    const Config store = s3_->StoreConfig("");
    for (const auto& [key, value] : store.values()) {
      if (key != "bucket" && key != "prefix") {
        flags.insert(flags.end(), {"--out-option", absl::StrCat(key, "=", value)});
      }
    }
    return flags;
  }

  ::keel::testing::TempDir dir_;
  std::unique_ptr<::keel::testing::S3rverProcess> s3_;
  InProcessDaemon daemon_;
};

std::map<std::string, std::string> DirectoryFiles(const std::string& root) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    files[std::filesystem::relative(entry.path(), root).string()] =
        std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return files;
}

TEST_F(ExportS3Test, TheObjectsAreTheFilesADirectoryExportWrites) {
  const std::string s3_target =
      absl::StrCat("s3://", ::keel::testing::S3rverProcess::kBucket, "/exports/lake");
  ::keel::testing::KeelRun to_s3 = Export(s3_target, S3Options());
  ASSERT_EQ(to_s3.code, cli::kExitOk) << to_s3.err;
  EXPECT_THAT(to_s3.out, HasSubstr("2 streams, 60 events in "));
  ::keel::testing::KeelRun to_dir = Export(dir_.Sub("lake"));
  ASSERT_EQ(to_dir.code, cli::kExitOk) << to_dir.err;

  LinkBuiltinColdStores();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ColdStore> bucket,
                       OpenColdStore("s3", s3_->StoreConfig("exports/lake")));
  ASSERT_OK_AND_ASSIGN(std::vector<ObjectInfo> objects, bucket->List(""));
  std::map<std::string, std::string> uploaded;
  for (const ObjectInfo& object : objects) {
    ASSERT_OK_AND_ASSIGN(uploaded[object.name], bucket->Read(object.name));
  }
  const std::map<std::string, std::string> written = DirectoryFiles(dir_.Sub("lake"));
  ASSERT_GE(written.size(), 9u);  // 40 events of lake.a in files of 7, 20 of lake.b.
  EXPECT_EQ(uploaded, written);

  // Its checkpoints are its own: a rerun finds nothing new.
  ::keel::testing::KeelRun again = Export(s3_target, S3Options());
  ASSERT_EQ(again.code, cli::kExitOk) << again.err;
  EXPECT_THAT(again.out, HasSubstr("0 events in 0 new files"));
}

TEST_F(ExportS3Test, AnUnreachableStoreIsAnErrorAndMovesNoCheckpoint) {
  const std::string s3_target = absl::StrCat("s3://", ::keel::testing::S3rverProcess::kBucket);
  std::vector<std::string> options = S3Options();
  options.insert(options.end(),
                 {"--out-option", "endpoint=http://127.0.0.1:1", "--out-option", "retries=0"});
  ::keel::testing::KeelRun down = Export(s3_target, options);
  EXPECT_EQ(down.code, cli::kExitFailure);
  EXPECT_THAT(down.err, HasSubstr("lake.a"));
  ::keel::testing::KeelRun up = Export(s3_target, S3Options());
  ASSERT_EQ(up.code, cli::kExitOk) << up.err;
  EXPECT_THAT(up.out, HasSubstr("60 events"));

  ::keel::testing::KeelRun unknown = Export(s3_target, {"--out-option", "colour=blue"});
  EXPECT_EQ(unknown.code, cli::kExitUsage);
  EXPECT_THAT(unknown.err, HasSubstr("colour"));
}

}  // namespace
}  // namespace keel::daemon_test
