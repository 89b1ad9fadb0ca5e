// Small POSIX file helpers for the "fs" cold store, with errors as
// absl::Status naming the path.
//
// Thread safety: pure functions over the file system.
#ifndef KEEL_COLDSTORE_FS_POSIX_IO_H_
#define KEEL_COLDSTORE_FS_POSIX_IO_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace keel::fs_io {

// A status for `errno_value` from `operation` on `path`: kNotFound
// (ErrorKind) for ENOENT, absl's nearest code otherwise.
absl::Status ErrnoError(int errno_value, absl::string_view operation, absl::string_view path);

// Creates `dir` and any missing parents, fsyncing the parent of each
// directory it creates so that the new entry survives a crash.
absl::Status CreateDirectories(const std::string& dir);

// fsyncs the directory `dir` (its entries: a link or unlink in it).
absl::Status SyncDirectory(const std::string& dir);

// Writes `bytes` to a new file `path` (which must not exist) and fsyncs it.
absl::Status WriteNewFileSynced(const std::string& path, absl::string_view bytes);

// Bytes [offset, offset + length) of `path`, fewer at its end.
absl::StatusOr<std::string> ReadFileRange(const std::string& path, uint64_t offset,
                                          uint64_t length);

// The size of the regular file `path`.
absl::StatusOr<uint64_t> FileSize(const std::string& path);

}  // namespace keel::fs_io

#endif  // KEEL_COLDSTORE_FS_POSIX_IO_H_
