// The "s3" cold store's own promises: its options and the AWS_*
// environment variables, key prefixes, and a store that cannot be reached
// failing with kUnavailable after its retries, naming the object.
#include "keel/coldstore/s3/s3_cold_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "keel/coldstore/cold_store.h"
#include "keel/core/errors.h"
#include "keel/tests/coldstore/s3rver_process.h"
#include "keel/tests/testing/status_matchers.h"
#include "keel/tests/testing/temp_dir.h"

namespace keel {
namespace {

using ::keel::testing::HasErrorKind;
using ::keel::testing::S3rverProcess;
using ::keel::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class S3ColdStoreTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    auto server = S3rverProcess::Start(KEEL_S3RVER_INSTALL_DIR, dir_->Sub("s3rver"));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = server->release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }

  static TempDir* dir_;
  static S3rverProcess* server_;
};

TempDir* S3ColdStoreTest::dir_ = nullptr;
S3rverProcess* S3ColdStoreTest::server_ = nullptr;

TEST_F(S3ColdStoreTest, ObjectsLiveUnderTheStoresPrefix) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ColdStore> cold,
                       OpenColdStore("s3", server_->StoreConfig("keel/cold")));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ColdStore> whole_bucket,
                       OpenColdStore("s3", server_->StoreConfig("")));
  ASSERT_OK(cold->PutIfAbsent("stream=a:b/1-2.seg", "segment"));
  ASSERT_OK_AND_ASSIGN(std::string read, whole_bucket->Read("keel/cold/stream=a:b/1-2.seg"));
  EXPECT_EQ(read, "segment");
  ASSERT_OK_AND_ASSIGN(std::vector<ObjectInfo> listed, cold->List(""));
  EXPECT_THAT(listed, ElementsAre(ObjectInfo{"stream=a:b/1-2.seg", 7}));
  EXPECT_THAT(cold->Describe(), HasSubstr(server_->endpoint()));
  EXPECT_THAT(cold->Describe(), HasSubstr("keel-test/keel/cold/"));
}

TEST_F(S3ColdStoreTest, CredentialsAndRegionComeFromTheEnvironmentWhenNotGiven) {
  Config config = server_->StoreConfig("env");
  Config without_credentials;
  for (const auto& [key, value] : config.values()) {
    if (key != "access_key_id" && key != "secret_access_key" && key != "region") {
      without_credentials.Set(key, value);
    }
  }
  unsetenv("AWS_ACCESS_KEY_ID");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  auto refused = OpenColdStore("s3", without_credentials);
  EXPECT_THAT(refused, HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(refused.status().message(), HasSubstr("AWS_ACCESS_KEY_ID"));

  setenv("AWS_ACCESS_KEY_ID", S3rverProcess::kAccessKeyId, 1);
  setenv("AWS_SECRET_ACCESS_KEY", S3rverProcess::kSecretAccessKey, 1);
  setenv("AWS_REGION", "eu-west-1", 1);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ColdStore> store, OpenColdStore("s3", without_credentials));
  EXPECT_OK(store->PutIfAbsent("x", "y"));
  // A key id the server does not know is refused: the variable was used.
  setenv("AWS_ACCESS_KEY_ID", "NOBODY", 1);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ColdStore> stranger,
                       OpenColdStore("s3", without_credentials));
  EXPECT_THAT(stranger->Read("x"), ::keel::testing::StatusIs(absl::StatusCode::kPermissionDenied));
  unsetenv("AWS_ACCESS_KEY_ID");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  unsetenv("AWS_REGION");
}

TEST(S3ColdStoreOptionsTest, RequiredAndMalformedOptionsAreRefused) {
  const Config good{{"endpoint", "http://127.0.0.1:9"},
                    {"bucket", "b"},
                    {"access_key_id", "k"},
                    {"secret_access_key", "s"}};
  EXPECT_OK(OpenColdStore("s3", good).status());
  for (const char* key : {"endpoint", "bucket"}) {
    Config config;
    for (const auto& [name, value] : good.values()) {
      if (name != key) config.Set(name, value);
    }
    auto opened = OpenColdStore("s3", config);
    EXPECT_THAT(opened, HasErrorKind(ErrorKind::kInvalidArgument)) << key;
    EXPECT_THAT(opened.status().message(), HasSubstr(key));
  }
  for (const char* endpoint : {"https://s3.example.com", "127.0.0.1:9000", "http://h:0",
                               "http://h:99999", "http://h/path"}) {
    Config config = good;
    config.Set("endpoint", endpoint);
    EXPECT_THAT(OpenColdStore("s3", config), HasErrorKind(ErrorKind::kInvalidArgument)) << endpoint;
  }
  Config typo = good;
  typo.Set("secret_acess_key", "s");
  EXPECT_THAT(OpenColdStore("s3", typo), HasErrorKind(ErrorKind::kInvalidArgument));
}

TEST(S3ColdStoreUnreachableTest, FailsUnavailableAfterItsRetriesNamingTheObject) {
  // A port that was just free: nothing listens on it.
  TempDir dir;
  Config config{{"endpoint", "http://127.0.0.1:1"}, {"bucket", "b"},  {"access_key_id", "k"},
                {"secret_access_key", "s"},         {"retries", "2"}, {"retry_backoff", "1ms"},
                {"connect_timeout", "2s"}};
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ColdStore> store, OpenColdStore("s3", config));
  auto put = store->PutIfAbsent("stream=s/1-9.seg", "bytes");
  EXPECT_THAT(put, HasErrorKind(ErrorKind::kUnavailable));
  EXPECT_THAT(put.status().message(), HasSubstr("stream=s/1-9.seg"));
  EXPECT_THAT(put.status().message(), HasSubstr("3 times"));
  EXPECT_THAT(store->List(""), HasErrorKind(ErrorKind::kUnavailable));
}

}  // namespace
}  // namespace keel
