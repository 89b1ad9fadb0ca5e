#include "keel/cmd/keel-bench/raw_leveldb.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "keel/cmd/keel-bench/bench_report.h"
#include "keel/core/status_macros.h"
#include "keel/statestore/leveldb/leveldb_store.h"
#include "leveldb/options.h"
#include "leveldb/write_batch.h"

namespace keel::bench {

absl::Status FromLevelDbStatus(const leveldb::Status& status, const std::string& path) {
  if (status.ok()) return absl::OkStatus();
  return absl::UnknownError(absl::StrCat("raw leveldb '", path, "': ", status.ToString()));
}

absl::StatusOr<std::unique_ptr<RawLevelDb>> RawLevelDb::Open(const std::string& path) {
  std::unique_ptr<RawLevelDb> raw(new RawLevelDb());
  raw->filter_.reset(leveldb::NewBloomFilterPolicy(10));
  // The same settings as the "leveldb" store's defaults.
  raw->cache_.reset(leveldb::NewLRUCache(LevelDbStore::kDefaultBlockCacheBytes));
  leveldb::Options options;
  options.create_if_missing = true;
  options.write_buffer_size = LevelDbStore::kDefaultWriteBufferBytes;
  options.block_cache = raw->cache_.get();
  options.filter_policy = raw->filter_.get();
  options.compression = leveldb::kSnappyCompression;
  std::error_code ignored;
  std::filesystem::create_directories(path, ignored);
  leveldb::DB* db = nullptr;
  leveldb::Status status = leveldb::DB::Open(options, path, &db);
  if (!status.ok()) return FromLevelDbStatus(status, path);
  raw->db_.reset(db);
  return raw;
}

absl::StatusOr<double> RawWriteRate(const std::string& path, uint64_t records, uint64_t per_batch,
                                    size_t value_bytes, bool sync) {
  KEEL_ASSIGN_OR_RETURN(std::unique_ptr<RawLevelDb> raw, RawLevelDb::Open(path));
  const std::string value(value_bytes, 'v');
  leveldb::WriteOptions options;
  options.sync = sync;
  Stopwatch watch;
  for (uint64_t i = 0; i < records; i += per_batch) {
    leveldb::WriteBatch batch;
    for (uint64_t j = i; j < i + per_batch && j < records; ++j) {
      batch.Put(absl::StrFormat("e/%016d", j), value);
    }
    leveldb::Status s = raw->db().Write(options, &batch);
    if (!s.ok()) return FromLevelDbStatus(s, path);
  }
  return static_cast<double>(records) / watch.Seconds();
}

}  // namespace keel::bench
