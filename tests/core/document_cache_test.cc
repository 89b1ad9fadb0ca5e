// The cache a collection's writes read documents' latest records from: it
// must never answer with a record older than the store's, even when a
// publisher's read of the store races a commit and an eviction.
#include "keel/core/document_cache.h"

#include <gtest/gtest.h>

#include <string>

namespace keel {
namespace {

DocumentRecord Version(uint64_t version, size_t body_bytes = 8) {
  return DocumentRecord{version, version * 10, false, absl::UnixEpoch(),
                        std::string(body_bytes, 'x')};
}

uint64_t CachedVersion(const DocumentCache& cache, const std::string& key) {
  std::optional<DocumentCache::Entry> entry = cache.Find(key);
  if (!entry) return 0;
  return *entry ? (*entry)->version : ~uint64_t{0};
}

TEST(DocumentCacheTest, AnswersWhatWasPutAndWhatWasFilledIncludingAbsence) {
  DocumentCache cache(1 << 20);
  EXPECT_FALSE(cache.Find("doc/a").has_value());
  cache.Put("doc/a", Version(3));
  EXPECT_EQ(CachedVersion(cache, "doc/a"), 3u);
  cache.Put("doc/a", Version(4));
  EXPECT_EQ(CachedVersion(cache, "doc/a"), 4u);
  cache.Fill("doc/none", std::nullopt, cache.evictions());
  ASSERT_TRUE(cache.Find("doc/none").has_value());
  EXPECT_FALSE(cache.Find("doc/none")->has_value());
}

TEST(DocumentCacheTest, AFillNeverReplacesACachedRecord) {
  // A publisher read version 3, then version 4 committed and was put.
  DocumentCache cache(1 << 20);
  const uint64_t before_read = cache.evictions();
  cache.Put("doc/a", Version(4));
  cache.Fill("doc/a", Version(3), before_read);
  EXPECT_EQ(CachedVersion(cache, "doc/a"), 4u);
}

TEST(DocumentCacheTest, AFillReadBeforeAnEvictionIsRefused) {
  // A publisher read version 3 of doc/a; version 4 may since have been
  // committed, put and evicted (which entry goes is arbitrary): filling 3
  // after any eviction could answer an old record.
  DocumentCache cache(64 * 1024);
  const uint64_t before_read = cache.evictions();
  for (int i = 0; i < 1000 && cache.evictions() == before_read; ++i) {
    cache.Put("doc/other" + std::to_string(i), Version(1, 900));
  }
  ASSERT_GT(cache.evictions(), before_read);
  ASSERT_FALSE(cache.Find("doc/a").has_value());
  cache.Fill("doc/a", Version(3, 900), before_read);
  EXPECT_FALSE(cache.Find("doc/a").has_value());
  // A read that began after the evictions fills.
  cache.Fill("doc/a", Version(4, 900), cache.evictions());
  EXPECT_EQ(CachedVersion(cache, "doc/a"), 4u);
}

TEST(DocumentCacheTest, ARecordTooBigToCacheDropsTheOldOneAndRefusesEarlierReads) {
  DocumentCache cache(16 * 1024);
  cache.Put("doc/a", Version(3));
  const uint64_t before_read = cache.evictions();
  cache.Put("doc/a", Version(4, 4096));
  EXPECT_FALSE(cache.Find("doc/a").has_value());
  cache.Fill("doc/a", Version(3), before_read);
  EXPECT_FALSE(cache.Find("doc/a").has_value());
}

TEST(DocumentCacheTest, StaysWithinItsBytes) {
  DocumentCache cache(64 * 1024);
  for (int i = 0; i < 1000; ++i) cache.Put("doc/" + std::to_string(i), Version(1, 1000));
  int cached = 0;
  for (int i = 0; i < 1000; ++i) cached += cache.Find("doc/" + std::to_string(i)).has_value();
  EXPECT_GT(cached, 0);
  EXPECT_LE(cached, 64);
}

}  // namespace
}  // namespace keel
