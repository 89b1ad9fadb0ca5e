// Small POSIX file helpers shared by the LevelDB store's Envs: an errno as a
// leveldb::Status, and the sync of a directory that makes a created or
// renamed name durable.
//
// Thread safety: pure functions.
#ifndef KEEL_STATESTORE_LEVELDB_POSIX_FILES_H_
#define KEEL_STATESTORE_LEVELDB_POSIX_FILES_H_

#include <string>

#include "leveldb/status.h"

namespace keel {

leveldb::Status ErrnoError(const std::string& context, int error);

leveldb::Status SyncDirectory(const std::string& directory);

}  // namespace keel

#endif  // KEEL_STATESTORE_LEVELDB_POSIX_FILES_H_
