// RawLevelDb: a LevelDB database opened directly, with the options the
// "leveldb" StateStore uses by default (statestore/leveldb/leveldb_store.cc:
// its default write buffer and block cache, 10-bit Bloom filter, snappy), so
// that a raw baseline and the durable driver differ only in Keel's layers.
//
// Used only by `keel-bench storage` for its baselines and to generate large
// stores in the durable driver's key layout quickly.
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

}  // namespace keel::bench

#endif  // KEEL_CMD_KEEL_BENCH_RAW_LEVELDB_H_
