// PreallocatedLogEnv: a leveldb::Env whose write-ahead logs start as files
// already zero-filled and synced, so that a synced write is an overwrite.
//
// Why: appending to a file and then calling fdatasync() also commits the new
// file size, which on ext4 and XFS means a journal commit per sync. Writing
// into blocks that already exist skips that commit; on the machines Keel was
// measured on an idle 8 KiB sync fell from ~340 to ~260 µs, and a durable
// publish with sync=always waits for about two of them.
//
// How: every log is written by this Env, at a running offset. A background
// thread makes a spare log, zero-filled and synced, in the database
// directory under kSpareLogName once the current log is a quarter full (1
// MiB for a log that was not itself a spare) and has been synced 16 times
// (synced writes sync it; the log file counts): a store that syncs only now
// and then gains nothing and would pay for writing each log twice, and a
// small database, such as a test's, never makes one. The next
// log LevelDB creates ("NNNNNN.log") is that spare, renamed, and the
// directory is synced (under LevelDB's mutex, once per log) so that the name
// is durable before any record is acknowledged. A spare that a previous run
// left is used when it has the right size and removed otherwise. The first
// log after open, created plain, is replaced at once through the rotator the
// store sets, so a fresh database does not run a whole log of slower syncs.
//
// Reading: LevelDB's log reader skips a zero-filled tail without reporting
// anything (record type 0 is reserved for preallocated regions). A record
// torn by a crash is followed by zeros rather than by the end of the file,
// so LevelDB reports it as a dropped record in its LOG and skips it, as it
// does a torn tail (the store does not set paranoid_checks, which would fail
// the open instead). Either way recovery reads exactly the records whose
// writes completed. When no spare is ready, or a log outgrows its
// preallocation, the log is appended to as usual: slower syncs, never a
// different result.
//
// Writing a plain log: its blocks are reserved with fallocate (no zeros
// written) and it is mapped shared, so a record is a copy into the page
// cache, with no write(2) per record, and is in the file the moment it is
// copied: a killed process loses nothing it wrote. Sync() stays an
// fdatasync(). The reservation keeps a full disk an error rather than a
// SIGBUS (a store through a map into an unreserved block); where it fails
// (a full disk, a file system without fallocate) the log is written with
// pwrite(2) and write errors are reported as before. A plain log so has
// the preallocated size from its start; its zero tail is read as above.
// Spares are written with pwrite(2): a store that has them syncs often,
// and synced writes through a map were slower.
//
// Every other file, and every other operation, goes to the wrapped Env.
//
// Thread safety: as leveldb::Env; the spare is handed over under a mutex.
#ifndef KEEL_STATESTORE_LEVELDB_PREALLOCATED_LOG_ENV_H_
#define KEEL_STATESTORE_LEVELDB_PREALLOCATED_LOG_ENV_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "keel/core/mutex.h"
#include "leveldb/env.h"

namespace keel {

// The spare log's file name inside the database directory. LevelDB ignores
// (and never deletes) names it does not recognise.
inline constexpr char kSpareLogName[] = "KEEL-SPARE-LOG";

class PreallocatedLogEnv final : public leveldb::EnvWrapper {
 public:
  // Wraps `base` (not owned; must outlive this) for the database in
  // `directory`. Each log is preallocated to `log_bytes`; a spare of another
  // size is not used.
  PreallocatedLogEnv(leveldb::Env* base, std::string directory, uint64_t log_bytes);
  ~PreallocatedLogEnv() override;  // Stops making a spare; keeps a made one.

  // Called on the background thread, without locks held, to make LevelDB
  // start a new log when a spare is ready while the first log since open is
  // still the current one and is not preallocated. The database must stay
  // open until StopMaking() returns.
  void SetLogRotator(std::function<void()> rotate);
  // Stops the background thread, waiting for a rotation in progress (which
  // flushes a small memtable). Call it before closing the database; the
  // destructor calls it too.
  void StopMaking();

  leveldb::Status NewWritableFile(const std::string& name,
                                  leveldb::WritableFile** result) override;

  // Syncs the logs LevelDB closed with unsynced records (it starts a new log
  // without syncing the old one). The store calls this after each synced
  // write, so that a synced write returns only once every record written
  // before it, in any log, is on disk.
  leveldb::Status SyncClosedLogs();

 private:
  bool IsLogFile(const std::string& name) const;
  bool TakeSpare(const std::string& name);
  void WantSpare();
  void RunMaker();
  leveldb::Status MakeSpare();

  const std::string directory_;
  const uint64_t log_bytes_;
  const std::string spare_path_;
  const std::string making_path_;

  Mutex mu_;
  CondVar wake_;
  std::atomic<bool> stopping_ = false;  // Read without the lock by MakeSpare.
  bool spare_ready_ ABSL_GUARDED_BY(mu_) = false;
  bool spare_wanted_ ABSL_GUARDED_BY(mu_) = false;  // The current log asked for one.
  int logs_created_ ABSL_GUARDED_BY(mu_) = 0;
  bool log_preallocated_ ABSL_GUARDED_BY(mu_) = false;  // The current log was a spare.
  std::function<void()> rotate_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> closed_unsynced_ ABSL_GUARDED_BY(mu_);  // SyncClosedLogs.
  std::thread maker_;  // Last: starts once the members above exist.
};

}  // namespace keel

#endif  // KEEL_STATESTORE_LEVELDB_PREALLOCATED_LOG_ENV_H_
