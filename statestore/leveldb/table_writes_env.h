// TableWritesEnv: a leveldb::Env whose table files reach the kernel in
// large writes.
//
// Why: LevelDB's TableBuilder flushes its file after every data block, and
// a 4 KiB block compresses to about 1 KiB, so building tables (memtable
// flushes and compactions) cost one write(2) per KiB: 27,600 a second under
// `keel-bench http`'s 100-event batches. A table is read only once it is
// finished: LevelDB syncs and closes it before any version refers to it, so
// those flushes buy nothing. Here Flush() of a table file does nothing, and
// the wrapped file's own buffer (64 KiB in LevelDB's POSIX Env) is written
// when it fills, on Sync() and on Close(). Other files (logs, the manifest,
// CURRENT) are untouched: a log's Flush() is what lets an unsynced write
// outlive the process.
//
// Thread safety: as leveldb::Env.
#ifndef KEEL_STATESTORE_LEVELDB_TABLE_WRITES_ENV_H_
#define KEEL_STATESTORE_LEVELDB_TABLE_WRITES_ENV_H_

#include <string>

#include "leveldb/env.h"

namespace keel {

class TableWritesEnv final : public leveldb::EnvWrapper {
 public:
  explicit TableWritesEnv(leveldb::Env* target) : leveldb::EnvWrapper(target) {}

  leveldb::Status NewWritableFile(const std::string& name,
                                  leveldb::WritableFile** result) override;
};

}  // namespace keel

#endif  // KEEL_STATESTORE_LEVELDB_TABLE_WRITES_ENV_H_
