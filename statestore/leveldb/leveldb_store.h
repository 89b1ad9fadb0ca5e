// LevelDbStore: the "leveldb" StateStore, a LevelDB database in one
// directory.
//
// Options (keel::Config):
//   path                required; the database directory.
//   block_cache_bytes   LRU cache of uncompressed blocks; default 8 MiB.
//   write_buffer_bytes  memtable size before a flush to disk, 64 KiB..1 GiB;
//                       default 32 MiB (LevelDB's own 4 MiB stalls writes
//                       of a few hundred thousand events per second behind
//                       compactions; up to twice this is held in memory).
//   compression         "snappy" (default) or "none".
//   create_if_missing   default true; false makes Open fail when the
//                       database does not exist.
//   preallocate_log     default true: each write-ahead log starts as a
//                       zero-filled file (see preallocated_log_env.h), so
//                       synced writes do not also commit a new file size.
//                       From the first synced write on, the directory holds
//                       one spare log as well.
// Invalid options fail Open with kInvalidArgument naming the option. LevelDB
// errors map to absl codes: NotFound -> kNotFound, Corruption -> kDataLoss,
// IOError -> kUnavailable (also when another process holds the database
// lock), InvalidArgument -> kInvalidArgument.
//
// A write that fails is the last the store takes: later writes fail with
// its error until the store is reopened (write_latch.h says why).
//
// Only one LevelDbStore (in any process) may have a directory open at a time.
// Close() releases the database at once unless iterators are still alive: an
// iterator keeps the database open until it is destroyed, so destroy
// iterators before reopening the same path.
//
// Thread safety: all methods are safe to call concurrently; an iterator is
// used by one thread at a time and reads the snapshot taken when it was made.
#ifndef KEEL_STATESTORE_LEVELDB_LEVELDB_STORE_H_
#define KEEL_STATESTORE_LEVELDB_LEVELDB_STORE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/core/mutex.h"
#include "keel/core/config.h"
#include "keel/statestore/state_store.h"

namespace keel {

class LevelDbStore final : public StateStore {
 public:
  // The defaults of block_cache_bytes and write_buffer_bytes (the raw
  // LevelDB baseline of `keel-bench storage` uses them too).
  static constexpr uint64_t kDefaultBlockCacheBytes = uint64_t{8} << 20;
  static constexpr uint64_t kDefaultWriteBufferBytes = uint64_t{32} << 20;

  static absl::StatusOr<std::unique_ptr<LevelDbStore>> Open(const Config& config);

  ~LevelDbStore() override;  // Calls Close().
  LevelDbStore(const LevelDbStore&) = delete;
  LevelDbStore& operator=(const LevelDbStore&) = delete;

  absl::StatusOr<std::string> Get(absl::string_view key) override;
  absl::Status Write(const WriteBatch& batch, const WriteOptions& options) override;
  std::unique_ptr<StoreIterator> NewIterator(const KeyRange& range) override;
  // Counts only data already flushed to table files, not the memtable.
  absl::StatusOr<uint64_t> ApproximateSize(const KeyRange& range) override;
  absl::Status Close() override;
  // The kernel's boot id (boot_id.h): LevelDB hands every write to the
  // kernel before it returns, synced or not. After a write failed, with the
  // failure's token (write_latch.h): a failed sync may have cost earlier
  // writes.
  std::string UnsyncedWritesLifetime() const override { return lifetime_; }
  absl::Status WriteStatus() override;

  // The database (and the objects it uses); shared with live iterators.
  struct Handle;

 private:
  explicit LevelDbStore(std::shared_ptr<Handle> handle);

  // The open database, or kClosed.
  absl::StatusOr<std::shared_ptr<Handle>> Acquire();

  const std::string lifetime_;
  Mutex mu_;
  std::shared_ptr<Handle> handle_ ABSL_GUARDED_BY(mu_);  // Null once closed.
};

}  // namespace keel

#endif  // KEEL_STATESTORE_LEVELDB_LEVELDB_STORE_H_
