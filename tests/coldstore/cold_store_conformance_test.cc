// The behaviour every cold store promises (coldstore/cold_store.h), run
// against each implementation: "fs" in a temporary directory and "s3"
// against a real S3-compatible server on loopback.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "keel/coldstore/cold_store.h"
#include "keel/core/errors.h"
#include "keel/tests/coldstore/cold_store_backends.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel {
namespace {

using ::keel::testing::HasErrorKind;
using ::keel::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

class ColdStoreConformanceTest : public ::testing::TestWithParam<BackendMaker> {
 protected:
  void SetUp() override {
    backend_ = GetParam().make();
    ASSERT_NE(backend_, nullptr);
    auto store = backend_->NewStore();
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(store).value();
  }

  std::unique_ptr<ColdStoreBackend> backend_;
  std::unique_ptr<ColdStore> store_;
};

// Bytes with every value, zeros included, so no layer may treat them as text.
std::string BinaryBytes(size_t size, unsigned seed = 7) {
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((i * 131 + seed) & 0xff);
  return bytes;
}

TEST_P(ColdStoreConformanceTest, APutObjectReadsBackWithItsSize) {
  const std::string bytes = BinaryBytes(10000);
  ASSERT_OK_AND_ASSIGN(PutOutcome outcome, store_->PutIfAbsent("stream=a/1-10.seg", bytes));
  EXPECT_EQ(outcome, PutOutcome::kCreated);
  ASSERT_OK_AND_ASSIGN(std::string read, store_->Read("stream=a/1-10.seg"));
  EXPECT_EQ(read, bytes);
  ASSERT_OK_AND_ASSIGN(uint64_t size, store_->Size("stream=a/1-10.seg"));
  EXPECT_EQ(size, bytes.size());
}

TEST_P(ColdStoreConformanceTest, AnEmptyObjectIsAnObject) {
  ASSERT_OK_AND_ASSIGN(PutOutcome outcome, store_->PutIfAbsent("empty", ""));
  EXPECT_EQ(outcome, PutOutcome::kCreated);
  ASSERT_OK_AND_ASSIGN(uint64_t size, store_->Size("empty"));
  EXPECT_EQ(size, 0u);
  ASSERT_OK_AND_ASSIGN(std::string read, store_->Read("empty"));
  EXPECT_EQ(read, "");
}

TEST_P(ColdStoreConformanceTest, RepeatingAPutWithTheSameBytesIsHarmless) {
  const std::string bytes = BinaryBytes(5000);
  ASSERT_OK(store_->PutIfAbsent("seg", bytes));
  ASSERT_OK_AND_ASSIGN(PutOutcome again, store_->PutIfAbsent("seg", bytes));
  EXPECT_EQ(again, PutOutcome::kAlreadyPresent);
  ASSERT_OK_AND_ASSIGN(std::string read, store_->Read("seg"));
  EXPECT_EQ(read, bytes);
}

TEST_P(ColdStoreConformanceTest, APutWithOtherBytesIsAConflictAndKeepsTheFirst) {
  const std::string first = BinaryBytes(5000, 1);
  ASSERT_OK(store_->PutIfAbsent("seg", first));
  // Same size, other bytes: only a comparison of the bytes can tell.
  EXPECT_THAT(store_->PutIfAbsent("seg", BinaryBytes(5000, 2)), HasErrorKind(ErrorKind::kConflict));
  EXPECT_THAT(store_->PutIfAbsent("seg", "short"), HasErrorKind(ErrorKind::kConflict));
  ASSERT_OK_AND_ASSIGN(std::string read, store_->Read("seg"));
  EXPECT_EQ(read, first);
}

TEST_P(ColdStoreConformanceTest, RangeReadsReturnTheBytesAskedForAndStopAtTheEnd) {
  const std::string bytes = BinaryBytes(4096);
  ASSERT_OK(store_->PutIfAbsent("obj", bytes));
  ASSERT_OK_AND_ASSIGN(std::string middle, store_->ReadRange("obj", 100, 50));
  EXPECT_EQ(middle, bytes.substr(100, 50));
  ASSERT_OK_AND_ASSIGN(std::string first, store_->ReadRange("obj", 0, 1));
  EXPECT_EQ(first, bytes.substr(0, 1));
  ASSERT_OK_AND_ASSIGN(std::string tail, store_->ReadRange("obj", 4000, 1000));
  EXPECT_EQ(tail, bytes.substr(4000));
  ASSERT_OK_AND_ASSIGN(std::string last, store_->ReadRange("obj", 4095, 1));
  EXPECT_EQ(last, bytes.substr(4095));
  ASSERT_OK_AND_ASSIGN(std::string past, store_->ReadRange("obj", 4096, 10));
  EXPECT_EQ(past, "");
  ASSERT_OK_AND_ASSIGN(std::string none, store_->ReadRange("obj", 10, 0));
  EXPECT_EQ(none, "");
}

TEST_P(ColdStoreConformanceTest, AMissingObjectIsNotFound) {
  EXPECT_THAT(store_->Read("nope"), HasErrorKind(ErrorKind::kNotFound));
  EXPECT_THAT(store_->ReadRange("nope", 0, 10), HasErrorKind(ErrorKind::kNotFound));
  EXPECT_THAT(store_->Size("nope"), HasErrorKind(ErrorKind::kNotFound));
}

TEST_P(ColdStoreConformanceTest, DeleteRemovesTheObjectAndMayBeRepeated) {
  ASSERT_OK(store_->PutIfAbsent("a/gone", "bytes"));
  ASSERT_OK(store_->PutIfAbsent("a/kept", "other"));
  ASSERT_OK(store_->Delete("a/gone"));
  EXPECT_THAT(store_->Size("a/gone"), HasErrorKind(ErrorKind::kNotFound));
  EXPECT_OK(store_->Delete("a/gone"));
  ASSERT_OK_AND_ASSIGN(std::vector<ObjectInfo> listed, store_->List("a/"));
  EXPECT_THAT(listed, ElementsAre(ObjectInfo{"a/kept", 5}));
  // The name is free again.
  ASSERT_OK_AND_ASSIGN(PutOutcome outcome, store_->PutIfAbsent("a/gone", "new bytes"));
  EXPECT_EQ(outcome, PutOutcome::kCreated);
}

TEST_P(ColdStoreConformanceTest, ListReturnsTheObjectsUnderAPrefixInNameOrder) {
  ASSERT_OK(store_->PutIfAbsent("stream=b/3", "333"));
  ASSERT_OK(store_->PutIfAbsent("stream=a/2", "22"));
  ASSERT_OK(store_->PutIfAbsent("stream=a/1", "1"));
  ASSERT_OK(store_->PutIfAbsent("stream=ab/4", "4444"));
  ASSERT_OK(store_->PutIfAbsent("top", "t"));
  ASSERT_OK_AND_ASSIGN(std::vector<ObjectInfo> a, store_->List("stream=a/"));
  EXPECT_THAT(a, ElementsAre(ObjectInfo{"stream=a/1", 1}, ObjectInfo{"stream=a/2", 2}));
  ASSERT_OK_AND_ASSIGN(std::vector<ObjectInfo> a_and_ab, store_->List("stream=a"));
  EXPECT_THAT(a_and_ab, ElementsAre(ObjectInfo{"stream=a/1", 1}, ObjectInfo{"stream=a/2", 2},
                                    ObjectInfo{"stream=ab/4", 4}));
  ASSERT_OK_AND_ASSIGN(std::vector<ObjectInfo> all, store_->List(""));
  EXPECT_THAT(all, ElementsAre(ObjectInfo{"stream=a/1", 1}, ObjectInfo{"stream=a/2", 2},
                               ObjectInfo{"stream=ab/4", 4}, ObjectInfo{"stream=b/3", 3},
                               ObjectInfo{"top", 1}));
  ASSERT_OK_AND_ASSIGN(std::vector<ObjectInfo> none, store_->List("stream=c/"));
  EXPECT_THAT(none, IsEmpty());
}

TEST_P(ColdStoreConformanceTest, ListPagesThroughManyObjects) {
  // Several pages of an S3 listing (the backend asks for 10 keys a page).
  constexpr int kObjects = 35;
  for (int i = 0; i < kObjects; ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "many/%05d", i);
    ASSERT_OK(store_->PutIfAbsent(name, "x"));
  }
  ASSERT_OK_AND_ASSIGN(std::vector<ObjectInfo> listed, store_->List("many/"));
  ASSERT_EQ(listed.size(), static_cast<size_t>(kObjects));
  EXPECT_EQ(listed.front().name, "many/00000");
  EXPECT_EQ(listed.back().name, "many/00034");
}

TEST_P(ColdStoreConformanceTest, BadNamesAreRefusedBeforeTheBackendSeesThem) {
  for (const char* name :
       {"", "/abs", "a//b", "../up", "a/./b", "a/.hidden", "sp ace", "a/", "q?x", "pct%41"}) {
    EXPECT_THAT(store_->PutIfAbsent(name, "x"), HasErrorKind(ErrorKind::kInvalidArgument)) << name;
    EXPECT_THAT(store_->Read(name), HasErrorKind(ErrorKind::kInvalidArgument)) << name;
  }
  EXPECT_THAT(store_->List("../"), HasErrorKind(ErrorKind::kInvalidArgument));
}

TEST_P(ColdStoreConformanceTest, LargeObjectsReadBackWholeAndByRange) {
  const std::string bytes = BinaryBytes(3 << 20);
  ASSERT_OK(store_->PutIfAbsent("big", bytes));
  ASSERT_OK_AND_ASSIGN(std::string read, store_->Read("big"));
  EXPECT_TRUE(read == bytes);
  ASSERT_OK_AND_ASSIGN(std::string tail, store_->ReadRange("big", bytes.size() - 100, 100));
  EXPECT_EQ(tail, bytes.substr(bytes.size() - 100));
}

INSTANTIATE_TEST_SUITE_P(AllColdStores, ColdStoreConformanceTest,
                         ::testing::ValuesIn(AllBackendMakers()),
                         [](const ::testing::TestParamInfo<BackendMaker>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace keel
