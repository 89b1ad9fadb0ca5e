#include "keel/coldstore/fs/posix_io.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"

namespace keel::fs_io {
namespace {

// Closes a descriptor when it goes out of scope.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }
  // Closes now, reporting close(2)'s error (a write-back failure on some
  // file systems).
  int Close() {
    const int rc = close(fd_);
    fd_ = -1;
    return rc;
  }

 private:
  int fd_;
};

std::string ParentOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

absl::Status ErrnoError(int errno_value, absl::string_view operation, absl::string_view path) {
  const std::string message =
      absl::StrCat(operation, " '", path, "' failed: ", std::strerror(errno_value));
  switch (errno_value) {
    case ENOENT:
      return NotFound(message);
    case EEXIST:
      return absl::AlreadyExistsError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    case ENOSPC:
    case EDQUOT:
      return absl::ResourceExhaustedError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::Status SyncDirectory(const std::string& dir) {
  FileDescriptor fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoError(errno, "open directory", dir);
  if (fsync(fd.get()) != 0) return ErrnoError(errno, "fsync directory", dir);
  return absl::OkStatus();
}

absl::Status CreateDirectories(const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat("'", dir, "' is not a directory"));
  }
  if (errno != ENOENT) return ErrnoError(errno, "stat", dir);
  const std::string parent = ParentOf(dir);
  if (parent != dir) {
    absl::Status made = CreateDirectories(parent);
    if (!made.ok()) return made;
  }
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return ErrnoError(errno, "mkdir", dir);
  return SyncDirectory(parent);
}

absl::Status WriteNewFileSynced(const std::string& path, absl::string_view bytes) {
  FileDescriptor fd(open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (fd.get() < 0) return ErrnoError(errno, "create", path);
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = write(fd.get(), bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "write", path);
    }
    written += static_cast<size_t>(n);
  }
  if (fsync(fd.get()) != 0) return ErrnoError(errno, "fsync", path);
  if (fd.Close() != 0) return ErrnoError(errno, "close", path);
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFileRange(const std::string& path, uint64_t offset,
                                          uint64_t length) {
  FileDescriptor fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoError(errno, "open", path);
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return ErrnoError(errno, "stat", path);
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat("'", path, "' is not a regular file"));
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (offset >= size) return std::string();
  const uint64_t want = std::min(length, size - offset);
  std::string out(want, '\0');
  uint64_t got = 0;
  while (got < want) {
    const ssize_t n = pread(fd.get(), out.data() + got, want - got, offset + got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "read", path);
    }
    if (n == 0) break;  // Truncated meanwhile: the caller sees a short read.
    got += static_cast<uint64_t>(n);
  }
  out.resize(got);
  return out;
}

absl::StatusOr<uint64_t> FileSize(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return ErrnoError(errno, "stat", path);
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat("'", path, "' is not a regular file"));
  }
  return static_cast<uint64_t>(st.st_size);
}

}  // namespace keel::fs_io
