// RawLevelDb: a LevelDB database opened directly, with the options the
// "leveldb" StateStore uses by default (statestore/leveldb/leveldb_store.cc:
// its default write buffer and block cache, 10-bit Bloom filter, snappy), so
// that a raw baseline and the durable driver differ only in Keel's layers.
//
// Used by `keel-bench storage` for its baselines and to generate large
// stores in the durable driver's key layout quickly, and by the modes that
// print the machine's raw write rates beside their figures (RawWriteRate).
//
// Thread safety: as leveldb::DB.
#ifndef KEEL_CMD_KEEL_BENCH_RAW_LEVELDB_H_
#define KEEL_CMD_KEEL_BENCH_RAW_LEVELDB_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "leveldb/cache.h"
#include "leveldb/db.h"
#include "leveldb/filter_policy.h"

namespace keel::bench {

class RawLevelDb {
 public:
  static absl::StatusOr<std::unique_ptr<RawLevelDb>> Open(const std::string& path);
  leveldb::DB& db() { return *db_; }

 private:
  RawLevelDb() = default;
  // Destroyed in reverse order: the database before its cache and filter.
  std::unique_ptr<const leveldb::FilterPolicy> filter_;
  std::unique_ptr<leveldb::Cache> cache_;
  std::unique_ptr<leveldb::DB> db_;
};

// Maps a LevelDB status for messages.
absl::Status FromLevelDbStatus(const leveldb::Status& status, const std::string& path);

// Raw LevelDB at `path`: `records` writes of `value_bytes` in WriteBatches
// of `per_batch`, synced or not; records per second. The machine's raw
// rates: unsynced batches of 1,000 (what a bulk publish costs) and synced
// single writes (the fsync rate, which bounds anything synced per record,
// such as a consumer group's lease or commit).
absl::StatusOr<double> RawWriteRate(const std::string& path, uint64_t records, uint64_t per_batch,
                                    size_t value_bytes, bool sync);

}  // namespace keel::bench

#endif  // KEEL_CMD_KEEL_BENCH_RAW_LEVELDB_H_
