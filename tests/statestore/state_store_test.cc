// Tests of the store-independent parts of statestore/state_store.h.
#include "keel/statestore/state_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "keel/statestore/builtin_stores.h"
#include "keel/tests/testing/status_matchers.h"
#include "keel/tests/testing/temp_dir.h"

namespace keel {
namespace {

using ::keel::testing::HasErrorKind;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(WriteBatchTest, RecordsOpsInOrderAndCountsBytes) {
  WriteBatch batch;
  EXPECT_TRUE(batch.empty());
  batch.Put("key", "value");
  batch.Delete("gone");
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_FALSE(batch.empty());
  EXPECT_EQ(batch.ops()[0].kind, WriteBatch::Op::Kind::kPut);
  EXPECT_EQ(batch.ops()[0].key, "key");
  EXPECT_EQ(batch.ops()[0].value, "value");
  EXPECT_EQ(batch.ops()[1].kind, WriteBatch::Op::Kind::kDelete);
  EXPECT_EQ(batch.ops()[1].key, "gone");
  EXPECT_EQ(batch.ops()[1].value, "");
  EXPECT_EQ(batch.ApproximateBytes(), 3u + 5u + 4u);

  batch.Clear();
  EXPECT_TRUE(batch.empty());
  EXPECT_EQ(batch.ApproximateBytes(), 0u);
}

TEST(WriteBatchTest, KeepsBinaryBytes) {
  WriteBatch batch;
  batch.Put(std::string("a\0b", 3), std::string("\0\xff", 2));
  EXPECT_EQ(batch.ops()[0].key, std::string("a\0b", 3));
  EXPECT_EQ(batch.ops()[0].value, std::string("\0\xff", 2));
}

TEST(WriteBatchTest, AppendConcatenates) {
  WriteBatch first;
  first.Put("a", "1");
  WriteBatch second;
  second.Delete("b");
  second.Put("c", "33");
  first.Append(second);
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first.ops()[1].key, "b");
  EXPECT_EQ(first.ops()[2].value, "33");
  EXPECT_EQ(first.ApproximateBytes(), 2u + 1u + 3u);
  EXPECT_EQ(second.size(), 2u);  // Unchanged.

  first.Append(first);
  EXPECT_EQ(first.size(), 6u);
  EXPECT_EQ(first.ops()[5].key, "c");
  EXPECT_EQ(first.ApproximateBytes(), 12u);
}

TEST(KeyRangeTest, PrefixIncrementsLastByte) {
  KeyRange range = KeyRange::Prefix("abc");
  EXPECT_EQ(range.start, "abc");
  EXPECT_EQ(range.limit, "abd");
}

TEST(KeyRangeTest, PrefixDropsTrailingFfBytes) {
  KeyRange range = KeyRange::Prefix("a\xff\xff");
  EXPECT_EQ(range.start, "a\xff\xff");
  EXPECT_EQ(range.limit, "b");

  range = KeyRange::Prefix(std::string("a\xff\0", 3));
  EXPECT_EQ(range.limit, "a\xff\x01");

  range = KeyRange::Prefix("\x7f");
  EXPECT_EQ(range.limit, "\x80");
}

TEST(KeyRangeTest, AllFfPrefixHasNoLimit) {
  KeyRange range = KeyRange::Prefix("\xff\xff");
  EXPECT_EQ(range.start, "\xff\xff");
  EXPECT_EQ(range.limit, "");
}

TEST(KeyRangeTest, EmptyPrefixIsEverything) {
  KeyRange range = KeyRange::Prefix("");
  EXPECT_EQ(range.start, "");
  EXPECT_EQ(range.limit, "");
}

TEST(BigEndianTest, AppendsEightBigEndianBytes) {
  std::string out = "x";
  AppendBigEndian64(out, 0x0102030405060708u);
  EXPECT_EQ(out, std::string("x\x01\x02\x03\x04\x05\x06\x07\x08", 9));
}

TEST(BigEndianTest, RoundTripsAndPreservesOrder) {
  std::vector<uint64_t> values = {0,         1, 255, 256, 65535, 65536, 1ull << 32, UINT64_MAX - 1,
                                  UINT64_MAX};
  std::vector<std::string> keys;
  for (uint64_t value : values) {
    std::string key;
    AppendBigEndian64(key, value);
    ASSERT_EQ(key.size(), 8u);
    EXPECT_EQ(DecodeBigEndian64(key), value);
    keys.push_back(key);
  }
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
}

TEST(BigEndianTest, DecodeReadsOnlyTheFirstEightBytes) {
  std::string bytes;
  AppendBigEndian64(bytes, 42);
  bytes += "trailer";
  EXPECT_EQ(DecodeBigEndian64(bytes), 42u);
}

TEST(StoreRegistryTest, BuiltinStoresAreRegistered) {
  LinkBuiltinStores();
  std::vector<std::string> names = StoreRegistry().RegisteredNames();
  EXPECT_THAT(names, ::testing::IsSupersetOf({"leveldb", "memory"}));
}

TEST(StoreRegistryTest, UnknownStoreNameListsRegisteredStores) {
  auto store = OpenStore("rocksdb", Config());
  EXPECT_THAT(store, HasErrorKind(ErrorKind::kNotFound));
  EXPECT_THAT(store.status().message(), HasSubstr("rocksdb"));
  EXPECT_THAT(store.status().message(), HasSubstr("leveldb, memory"));
}

TEST(StoreRegistryTest, OpenStoreOpensByName) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<StateStore> store, OpenStore("memory", Config()));
  WriteBatch batch;
  batch.Put("k", "v");
  ASSERT_OK(store->Write(batch, WriteOptions()));
  ASSERT_OK_AND_ASSIGN(std::string value, store->Get("k"));
  EXPECT_EQ(value, "v");
}

TEST(StoreRegistryTest, OpenStoreRefusesAnOptionTheStoreDoesNotDeclare) {
  testing::TempDir dir;
  auto typo = OpenStore("leveldb", Config{{"path", dir.Sub("db")}, {"compresion", "none"}});
  EXPECT_THAT(typo, HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(typo.status().message(),
              AllOf(HasSubstr("store 'leveldb'"), HasSubstr("unknown option 'compresion'"),
                    HasSubstr("path, block_cache_bytes")));
  auto path = OpenStore("memory", Config{{"path", dir.Sub("db")}});
  EXPECT_THAT(path, HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(path.status().message(), HasSubstr("valid options: (none)"));
}

TEST(StoreRegistryTest, OpenStoreRefusesAValueNotOfTheDeclaredType) {
  testing::TempDir dir;
  auto store = OpenStore("leveldb", Config{{"path", dir.Sub("db")}, {"create_if_missing", "sure"}});
  EXPECT_THAT(store, HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(store.status().message(),
              AllOf(HasSubstr("store 'leveldb'"), HasSubstr("option 'create_if_missing'")));
}

TEST(StoreRegistryTest, StoresTellWhetherTheyKeepDataAndWaitForADisk) {
  LinkBuiltinStores();
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<StoreFactory> leveldb, StoreRegistry().Find("leveldb"));
  EXPECT_TRUE(leveldb->Traits(Config{}).keeps_data);
  EXPECT_TRUE(leveldb->Traits(Config{}).synced_writes_wait_for_disk);
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<StoreFactory> memory, StoreRegistry().Find("memory"));
  EXPECT_FALSE(memory->Traits(Config{}).keeps_data);
  EXPECT_FALSE(memory->Traits(Config{}).synced_writes_wait_for_disk);
}

TEST(StoreRegistryTest, ScopedOverrideReplacesAStore) {
  class NullFactory : public StoreFactory {
   public:
    absl::string_view name() const override { return "memory"; }
    absl::string_view description() const override { return "test"; }
    absl::StatusOr<std::unique_ptr<StateStore>> Open(const Config&) const override {
      return absl::UnimplementedError("overridden");
    }
  };
  {
    Registry<StoreFactory>::ScopedOverride override(StoreRegistry(),
                                                    std::make_shared<NullFactory>());
    EXPECT_THAT(OpenStore("memory", Config()),
                ::keel::testing::StatusIs(absl::StatusCode::kUnimplemented));
  }
  EXPECT_OK(OpenStore("memory", Config()));
}

}  // namespace
}  // namespace keel
