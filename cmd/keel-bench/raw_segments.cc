#include "keel/cmd/keel-bench/raw_segments.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel-bench/bench_report.h"
#include "keel/coldstore/segment/segment.h"
#include "keel/core/status_macros.h"

namespace keel::bench {
namespace {

namespace fs = std::filesystem;

constexpr size_t kReadBytes = 1 << 20;

// Listed before any timing starts: a directory walk is not a read.
absl::StatusOr<std::vector<std::string>> SegmentFiles(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".seg") {
      files.push_back(it->path().string());
    }
  }
  if (ec) return absl::UnknownError(absl::StrCat("listing ", dir, ": ", ec.message()));
  std::sort(files.begin(), files.end());
  return files;
}

// Appends the file's bytes to `out` (cleared first when `keep` is false:
// the bytes are then only counted).
absl::StatusOr<uint64_t> ReadFile(const std::string& path, std::string& out, bool keep) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::UnknownError(absl::StrCat("open ", path, ": ", std::strerror(errno)));
  uint64_t total = 0;
  std::string chunk(kReadBytes, '\0');
  while (true) {
    const ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return absl::UnknownError(absl::StrCat("read ", path, ": ", std::strerror(error)));
    }
    if (n == 0) break;
    total += static_cast<uint64_t>(n);
    if (keep) out.append(chunk.data(), static_cast<size_t>(n));
  }
  ::close(fd);
  return total;
}

}  // namespace

absl::StatusOr<SegmentsRead> ReadSegmentFiles(const std::string& dir) {
  KEEL_ASSIGN_OR_RETURN(std::vector<std::string> files, SegmentFiles(dir));
  SegmentsRead read;
  std::string unused;
  Stopwatch watch;
  for (const std::string& file : files) {
    KEEL_ASSIGN_OR_RETURN(uint64_t bytes, ReadFile(file, unused, /*keep=*/false));
    read.bytes += bytes;
  }
  read.seconds = watch.Seconds();
  read.files = files.size();
  return read;
}

absl::StatusOr<SegmentsRead> DecodeSegmentFiles(const std::string& dir) {
  KEEL_ASSIGN_OR_RETURN(std::vector<std::string> files, SegmentFiles(dir));
  SegmentsRead read;
  std::string bytes;
  Stopwatch watch;
  for (const std::string& file : files) {
    bytes.clear();
    KEEL_ASSIGN_OR_RETURN(uint64_t size, ReadFile(file, bytes, /*keep=*/true));
    read.bytes += size;
    // The object's name in the store, which DecodeSegment checks the
    // header against.
    const std::string name = fs::path(file).lexically_relative(dir).string();
    KEEL_ASSIGN_OR_RETURN(DecodedSegment segment, DecodeSegment(bytes, name));
    read.events += segment.entries.size();
  }
  read.seconds = watch.Seconds();
  read.files = files.size();
  return read;
}

}  // namespace keel::bench
