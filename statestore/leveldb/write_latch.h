// WriteLatch and WriteLatchEnv: after one failed write, a LevelDB store
// takes no more until it is reopened.
//
// Why: LevelDB's log writer counts the bytes of a record it failed to
// write into its position within the log's 32 KiB blocks, so every later
// record of that log lands misplaced and the next recovery drops it, though
// its write was acknowledged. LevelDB refuses writes after a failed sync,
// not after a failed append. LevelDbStore::Write refuses writes once the
// latch is set, but a write already queued inside LevelDB when another
// failed would still be appended: the log file itself must refuse it. So
// WriteLatchEnv wraps every write-ahead log ("*.log") it opens in a file
// that sets the latch when an append, flush or sync fails and fails every
// one after that.
//
// A failed sync may also have cost writes acknowledged before it: the
// kernel may drop cached pages it failed to write back. So the latch records
// its first failure in the database directory (RecordWriteFailure) the
// moment it is set, and the store's next open carries its token in
// UnsyncedWritesLifetime(): no open after a failed write is in the lifetime
// of the writes before it.
//
// Thread safety: all methods are safe to call concurrently.
#ifndef KEEL_STATESTORE_LEVELDB_WRITE_LATCH_H_
#define KEEL_STATESTORE_LEVELDB_WRITE_LATCH_H_

#include <atomic>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "keel/core/mutex.h"
#include "leveldb/env.h"

namespace keel {

class WriteLatch {
 public:
  // Records its failure in `db_dir`.
  explicit WriteLatch(std::string db_dir) : db_dir_(std::move(db_dir)) {}

  bool failed() const { return failed_.load(std::memory_order_acquire); }
  // OK until Fail(); then the first failure (its code and error kind), saying
  // that no write is taken until the store is reopened.
  absl::Status status() const;
  // The first call counts, and records the failure.
  void Fail(const absl::Status& status);

 private:
  const std::string db_dir_;
  std::atomic<bool> failed_{false};
  mutable Mutex mu_;
  absl::Status first_ ABSL_GUARDED_BY(mu_);
};

// The file in the database directory that holds the token of the last
// recorded write failure. LevelDB ignores names it does not know.
inline constexpr char kWriteFailureName[] = "KEEL-WRITE-FAILURE";

// The token recorded in `db_dir`: nullopt when no failure was, "" when one
// was but its token could not be written.
std::optional<std::string> WriteFailureToken(const std::string& db_dir);
// Records a new random token in `db_dir`, synced with its directory. Best
// effort: a disk that refuses even this leaves the next open unaware.
void RecordWriteFailure(const std::string& db_dir);

class WriteLatchEnv final : public leveldb::EnvWrapper {
 public:
  // Neither is owned; both must outlive this.
  WriteLatchEnv(leveldb::Env* target, WriteLatch& latch)
      : leveldb::EnvWrapper(target), latch_(latch) {}

  leveldb::Status NewWritableFile(const std::string& name, leveldb::WritableFile** result) override;

 private:
  WriteLatch& latch_;
};

}  // namespace keel

#endif  // KEEL_STATESTORE_LEVELDB_WRITE_LATCH_H_
