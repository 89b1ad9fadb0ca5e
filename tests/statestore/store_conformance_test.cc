// Behaviour every StateStore implementation shares, run against each
// registered store ("memory", and "leveldb" in a fresh directory).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "keel/statestore/state_store.h"
#include "keel/tests/testing/status_matchers.h"
#include "keel/tests/testing/temp_dir.h"

namespace keel {
namespace {

using ::keel::testing::HasErrorKind;
using ::keel::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

using Entries = std::vector<std::pair<std::string, std::string>>;

class StoreConformanceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    Config config;
    if (GetParam() == "leveldb") config.Set("path", dir_.Sub("db"));
    ASSERT_OK_AND_ASSIGN(store_, OpenStore(GetParam(), config));
  }

  void Put(absl::string_view key, absl::string_view value) {
    WriteBatch batch;
    batch.Put(key, value);
    ASSERT_OK(store_->Write(batch, WriteOptions()));
  }

  static Entries Drain(StoreIterator& it) {
    Entries entries;
    for (; it.Valid(); it.Next()) entries.emplace_back(it.key(), it.value());
    EXPECT_OK(it.status());
    return entries;
  }

  Entries Scan(const KeyRange& range) {
    std::unique_ptr<StoreIterator> it = store_->NewIterator(range);
    it->Seek(range.start);
    return Drain(*it);
  }

  std::vector<std::string> Keys(const KeyRange& range) {
    std::vector<std::string> keys;
    for (auto& [key, value] : Scan(range)) keys.push_back(key);
    return keys;
  }

  ::keel::testing::TempDir dir_;
  std::unique_ptr<StateStore> store_;
};

TEST_P(StoreConformanceTest, PutGetOverwriteDelete) {
  Put("alpha", "1");
  ASSERT_OK_AND_ASSIGN(std::string value, store_->Get("alpha"));
  EXPECT_EQ(value, "1");

  Put("alpha", "2");
  ASSERT_OK_AND_ASSIGN(value, store_->Get("alpha"));
  EXPECT_EQ(value, "2");

  WriteBatch batch;
  batch.Delete("alpha");
  ASSERT_OK(store_->Write(batch, WriteOptions{.sync = true}));
  EXPECT_THAT(store_->Get("alpha"), HasErrorKind(ErrorKind::kNotFound));
}

TEST_P(StoreConformanceTest, MissingKeyIsNotFound) {
  Put("present", "x");
  auto missing = store_->Get("absent");
  EXPECT_THAT(missing, StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(missing, HasErrorKind(ErrorKind::kNotFound));
}

TEST_P(StoreConformanceTest, BinaryKeysAndValues) {
  const std::string key("k\0\xff", 3);
  const std::string value("\0\x01\xfe", 3);
  Put(key, value);
  Put(std::string("k\0", 2), "shorter");
  ASSERT_OK_AND_ASSIGN(std::string read, store_->Get(key));
  EXPECT_EQ(read, value);
  ASSERT_OK_AND_ASSIGN(read, store_->Get(std::string("k\0", 2)));
  EXPECT_EQ(read, "shorter");
  EXPECT_THAT(store_->Get("k"), HasErrorKind(ErrorKind::kNotFound));
}

TEST_P(StoreConformanceTest, BatchAppliesEveryOpInOrder) {
  Put("doomed", "x");
  Put("flip", "old");
  WriteBatch batch;
  batch.Put("a", "1");
  batch.Put("b", "2");
  batch.Delete("doomed");
  batch.Put("flip", "new");
  batch.Put("transient", "t");
  batch.Delete("transient");  // Later ops win.
  batch.Delete("reborn");
  batch.Put("reborn", "r");
  ASSERT_OK(store_->Write(batch, WriteOptions()));

  EXPECT_THAT(Scan(KeyRange{}), ElementsAre(Pair("a", "1"), Pair("b", "2"), Pair("flip", "new"),
                                            Pair("reborn", "r")));
}

TEST_P(StoreConformanceTest, BatchIsVisibleAllOrNothingToConcurrentReaders) {
  constexpr int kBatches = 200;
  std::atomic<bool> done{false};
  std::atomic<int> torn{0};
  std::thread reader([&] {
    while (!done.load()) {
      std::unique_ptr<StoreIterator> it = store_->NewIterator(KeyRange{});
      int a = 0, b = 0;
      for (it->Seek(""); it->Valid(); it->Next()) (it->key()[0] == 'a' ? a : b)++;
      if (a != b) torn.fetch_add(1);
    }
  });
  for (int i = 0; i < kBatches; ++i) {
    WriteBatch batch;
    std::string suffix;
    AppendBigEndian64(suffix, i);
    batch.Put("a" + suffix, "x");
    batch.Put("b" + suffix, "y");
    ASSERT_OK(store_->Write(batch, WriteOptions()));
  }
  done.store(true);
  reader.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_EQ(Scan(KeyRange{}).size(), 2u * kBatches);
}

TEST_P(StoreConformanceTest, BigEndianKeysIterateInNumericOrder) {
  const std::vector<uint64_t> numbers = {65536, 1, 256, UINT64_MAX, 255, 0, 1ull << 40};
  for (uint64_t n : numbers) {
    std::string key = "seq/";
    AppendBigEndian64(key, n);
    Put(key, std::to_string(n));
  }
  std::vector<std::string> values;
  for (auto& [key, value] : Scan(KeyRange::Prefix("seq/"))) {
    EXPECT_EQ(std::to_string(DecodeBigEndian64(absl::string_view(key).substr(4))), value);
    values.push_back(value);
  }
  EXPECT_THAT(values, ElementsAre("0", "1", "255", "256", "65536", "1099511627776",
                                  "18446744073709551615"));
}

TEST_P(StoreConformanceTest, RangeIsStartInclusiveLimitExclusive) {
  for (const char* key : {"a", "b", "bb", "c", "d", "e"}) Put(key, "v");
  EXPECT_THAT(Keys(KeyRange{"b", "d"}), ElementsAre("b", "bb", "c"));
  EXPECT_THAT(Keys(KeyRange{"b", ""}), ElementsAre("b", "bb", "c", "d", "e"));
  EXPECT_THAT(Keys(KeyRange{"", "b"}), ElementsAre("a"));
  EXPECT_THAT(Keys(KeyRange{"ba", "bz"}), ElementsAre("bb"));
  EXPECT_THAT(Keys(KeyRange{"x", "z"}), IsEmpty());
  EXPECT_THAT(Keys(KeyRange{"c", "c"}), IsEmpty());
}

TEST_P(StoreConformanceTest, SeekStaysInsideTheRange) {
  for (const char* key : {"a", "b", "bb", "c", "d", "e"}) Put(key, "v");
  std::unique_ptr<StoreIterator> it = store_->NewIterator(KeyRange{"b", "d"});
  it->Seek("a");  // Below start: the first key of the range.
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "b");
  it->Seek("bc");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "c");
  it->Next();
  EXPECT_FALSE(it->Valid());  // "d" is the limit.
  it->Seek("d");
  EXPECT_FALSE(it->Valid());
  it->Seek("zzz");
  EXPECT_FALSE(it->Valid());
  EXPECT_OK(it->status());
}

TEST_P(StoreConformanceTest, PrefixRangesIncludingFfBytes) {
  const std::vector<std::string> keys = {"o",
                                         "p",
                                         std::string("p\0", 2),
                                         "p\x7f",
                                         "p\xff",
                                         "p\xff\xff",
                                         "q",
                                         "\xfe\xff",
                                         "\xff",
                                         "\xff\xff",
                                         std::string("\xff\xff\0", 3)};
  for (const std::string& key : keys) Put(key, "v");

  EXPECT_THAT(Keys(KeyRange::Prefix("p")),
              ElementsAre("p", std::string("p\0", 2), "p\x7f", "p\xff", "p\xff\xff"));
  EXPECT_THAT(Keys(KeyRange::Prefix("p\xff")), ElementsAre("p\xff", "p\xff\xff"));
  EXPECT_THAT(Keys(KeyRange::Prefix("\xff")),
              ElementsAre("\xff", "\xff\xff", std::string("\xff\xff\0", 3)));
  EXPECT_THAT(Keys(KeyRange::Prefix("\xff\xff")),
              ElementsAre("\xff\xff", std::string("\xff\xff\0", 3)));
  EXPECT_THAT(Keys(KeyRange::Prefix("\xfe")), ElementsAre("\xfe\xff"));
  EXPECT_THAT(Keys(KeyRange::Prefix("r")), IsEmpty());
}

TEST_P(StoreConformanceTest, SeekToLastAndPrevRespectTheRange) {
  for (const char* key : {"a", "b", "c", "d", "e"}) Put(key, "v");

  std::unique_ptr<StoreIterator> it = store_->NewIterator(KeyRange{"b", "d"});
  it->SeekToLast();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "c");
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "b");
  it->Prev();
  EXPECT_FALSE(it->Valid());  // "a" is below start.
  EXPECT_OK(it->status());

  it = store_->NewIterator(KeyRange{});
  it->SeekToLast();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "e");

  it = store_->NewIterator(KeyRange{"c", "zz"});  // Limit past every key.
  it->SeekToLast();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "e");

  it = store_->NewIterator(KeyRange{"b", "cc"});  // Limit between keys.
  it->SeekToLast();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "c");
  it->Next();
  EXPECT_FALSE(it->Valid());

  it = store_->NewIterator(KeyRange{"x", "z"});  // Nothing in range.
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
}

TEST_P(StoreConformanceTest, IteratorSeesTheSnapshotTakenAtCreation) {
  Put("a", "1");
  Put("b", "2");
  std::unique_ptr<StoreIterator> it = store_->NewIterator(KeyRange{});

  WriteBatch batch;
  batch.Put("a", "changed");
  batch.Delete("b");
  batch.Put("c", "3");
  ASSERT_OK(store_->Write(batch, WriteOptions()));

  it->Seek("");
  EXPECT_THAT(Drain(*it), ElementsAre(Pair("a", "1"), Pair("b", "2")));
  EXPECT_THAT(Scan(KeyRange{}), ElementsAre(Pair("a", "changed"), Pair("c", "3")));
}

TEST_P(StoreConformanceTest, IteratorCanReseek) {
  for (const char* key : {"a", "b", "c"}) Put(key, "v");
  std::unique_ptr<StoreIterator> it = store_->NewIterator(KeyRange{});
  it->Seek("");
  EXPECT_EQ(Drain(*it).size(), 3u);
  it->Seek("b");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "b");
  it->SeekToLast();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "c");
}

TEST_P(StoreConformanceTest, EmptyStoreHasNothingToIterate) {
  std::unique_ptr<StoreIterator> it = store_->NewIterator(KeyRange{});
  it->Seek("");
  EXPECT_FALSE(it->Valid());
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  EXPECT_OK(it->status());
  ASSERT_OK_AND_ASSIGN(uint64_t size, store_->ApproximateSize(KeyRange{}));
  EXPECT_EQ(size, 0u);
}

TEST_P(StoreConformanceTest, CloseMakesLaterCallsFailWithClosed) {
  Put("a", "1");
  ASSERT_OK(store_->Close());

  EXPECT_THAT(store_->Get("a"), HasErrorKind(ErrorKind::kClosed));
  WriteBatch batch;
  batch.Put("b", "2");
  EXPECT_THAT(store_->Write(batch, WriteOptions()), HasErrorKind(ErrorKind::kClosed));
  EXPECT_THAT(store_->ApproximateSize(KeyRange{}), HasErrorKind(ErrorKind::kClosed));
  std::unique_ptr<StoreIterator> it = store_->NewIterator(KeyRange{});
  ASSERT_NE(it, nullptr);
  it->Seek("");
  EXPECT_FALSE(it->Valid());
  EXPECT_THAT(it->status(), HasErrorKind(ErrorKind::kClosed));

  EXPECT_OK(store_->Close());  // Idempotent.
  EXPECT_THAT(store_->Get("a"), HasErrorKind(ErrorKind::kClosed));
}

TEST_P(StoreConformanceTest, IteratorMadeBeforeCloseStillReadsItsSnapshot) {
  Put("a", "1");
  Put("b", "2");
  std::unique_ptr<StoreIterator> it = store_->NewIterator(KeyRange{});
  ASSERT_OK(store_->Close());
  it->Seek("");
  EXPECT_THAT(Drain(*it), ElementsAre(Pair("a", "1"), Pair("b", "2")));
}

TEST_P(StoreConformanceTest, ConcurrentWritersAndReaders) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 100;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        std::string key = "t" + std::to_string(t) + "/";
        AppendBigEndian64(key, i);
        WriteBatch batch;
        batch.Put(key, std::to_string(i));
        EXPECT_OK(store_->Write(batch, WriteOptions()));
        EXPECT_OK(store_->Get(key));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(Scan(KeyRange{}).size(), static_cast<size_t>(kThreads * kPerThread));
  EXPECT_EQ(Scan(KeyRange::Prefix("t2/")).size(), static_cast<size_t>(kPerThread));
}

INSTANTIATE_TEST_SUITE_P(AllStores, StoreConformanceTest, ::testing::Values("memory", "leveldb"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace keel
