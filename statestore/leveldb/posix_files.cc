#include "keel/statestore/leveldb/posix_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

namespace keel {

leveldb::Status ErrnoError(const std::string& context, int error) {
  return leveldb::Status::IOError(context, std::strerror(error));
}

leveldb::Status SyncDirectory(const std::string& directory) {
  int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(directory, errno);
  leveldb::Status status;
  if (::fsync(fd) != 0) status = ErrnoError(directory, errno);
  ::close(fd);
  return status;
}

}  // namespace keel
