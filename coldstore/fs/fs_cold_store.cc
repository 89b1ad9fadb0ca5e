#include "keel/coldstore/fs/fs_cold_store.h"

#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <system_error>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "keel/coldstore/fs/posix_io.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel {
namespace {

constexpr absl::string_view kTemporaryPrefix = ".tmp-";

std::string DirectoryOf(const std::string& path) { return path.substr(0, path.find_last_of('/')); }

// A name no other put (of this or another process) picks for its
// temporary file.
std::string TemporaryName() {
  static std::atomic<uint64_t> counter{0};
  thread_local absl::BitGen gen;
  return absl::StrCat(kTemporaryPrefix, getpid(), "-", counter.fetch_add(1), "-",
                      absl::Uniform<uint64_t>(gen));
}

class FsColdStoreFactory final : public ColdStoreFactory {
 public:
  absl::string_view name() const override { return "fs"; }
  absl::string_view description() const override {
    return "immutable objects as files under a directory (written whole, fsynced, never "
           "replaced)";
  }
  std::vector<OptionSpec> options() const override {
    return {StringOption("path", "(required)", "the directory; created when missing")};
  }
  absl::StatusOr<std::unique_ptr<ColdStore>> Open(const Config& config) const override {
    const std::string path = config.GetString("path", "");
    if (path.empty()) return InvalidArgument("cold store 'fs': option 'path' is required");
    KEEL_ASSIGN_OR_RETURN(std::unique_ptr<FsColdStore> store, FsColdStore::Open(path));
    return std::unique_ptr<ColdStore>(std::move(store));
  }
};

}  // namespace

KEEL_REGISTER_COLD_STORE(fs, FsColdStoreFactory);

absl::StatusOr<std::unique_ptr<FsColdStore>> FsColdStore::Open(std::string root) {
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (root.empty()) return InvalidArgument("cold store 'fs': empty path");
  KEEL_RETURN_IF_ERROR(fs_io::CreateDirectories(root));
  return std::unique_ptr<FsColdStore>(new FsColdStore(std::move(root)));
}

std::string FsColdStore::PathOf(absl::string_view name) const {
  return absl::StrCat(root_, "/", name);
}

std::string FsColdStore::Describe() const { return absl::StrCat("fs:", root_); }

absl::StatusOr<PutOutcome> FsColdStore::PutIfAbsent(absl::string_view name,
                                                    absl::string_view bytes) {
  KEEL_RETURN_IF_ERROR(ValidateObjectName(name));
  const std::string path = PathOf(name);
  const std::string dir = DirectoryOf(path);
  KEEL_RETURN_IF_ERROR(fs_io::CreateDirectories(dir));
  if (access(path.c_str(), F_OK) == 0) return CompareWithExisting(*this, name, bytes);

  const std::string temporary = absl::StrCat(dir, "/", TemporaryName());
  absl::Status written = fs_io::WriteNewFileSynced(temporary, bytes);
  if (!written.ok()) {
    unlink(temporary.c_str());
    return written;
  }
  // link(2), unlike rename(2), fails when the name exists: a put racing
  // with another never replaces what that one stored.
  const int linked = link(temporary.c_str(), path.c_str());
  const int link_errno = errno;
  unlink(temporary.c_str());
  if (linked != 0) {
    if (link_errno == EEXIST) return CompareWithExisting(*this, name, bytes);
    return fs_io::ErrnoError(link_errno, "link", path);
  }
  KEEL_RETURN_IF_ERROR(fs_io::SyncDirectory(dir));
  return PutOutcome::kCreated;
}

absl::StatusOr<std::string> FsColdStore::ReadRange(absl::string_view name, uint64_t offset,
                                                   uint64_t length) {
  KEEL_RETURN_IF_ERROR(ValidateObjectName(name));
  return fs_io::ReadFileRange(PathOf(name), offset, length);
}

absl::StatusOr<uint64_t> FsColdStore::Size(absl::string_view name) {
  KEEL_RETURN_IF_ERROR(ValidateObjectName(name));
  return fs_io::FileSize(PathOf(name));
}

absl::Status FsColdStore::Delete(absl::string_view name) {
  KEEL_RETURN_IF_ERROR(ValidateObjectName(name));
  const std::string path = PathOf(name);
  if (unlink(path.c_str()) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return fs_io::ErrnoError(errno, "unlink", path);
  }
  return fs_io::SyncDirectory(DirectoryOf(path));
}

absl::StatusOr<std::vector<ObjectInfo>> FsColdStore::List(absl::string_view prefix) {
  KEEL_RETURN_IF_ERROR(ValidateObjectPrefix(prefix));
  // Walk only the deepest directory the prefix names whole.
  const size_t slash = prefix.find_last_of('/');
  const std::string start_relative =
      slash == absl::string_view::npos ? "" : std::string(prefix.substr(0, slash));
  const std::filesystem::path start = start_relative.empty()
                                          ? std::filesystem::path(root_)
                                          : std::filesystem::path(root_) / start_relative;
  std::vector<ObjectInfo> objects;
  std::error_code error;
  if (!std::filesystem::is_directory(start, error)) return objects;
  std::filesystem::recursive_directory_iterator it(start, error), end;
  for (; !error && it != end; it.increment(error)) {
    const std::string leaf = it->path().filename().string();
    if (absl::StartsWith(leaf, ".")) {
      // Temporary files, and anything else no put made.
      if (it->is_directory(error)) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(error)) continue;
    std::string name = std::filesystem::relative(it->path(), root_, error).generic_string();
    if (error) break;
    if (!absl::StartsWith(name, prefix)) continue;
    const uint64_t size = it->file_size(error);
    if (error) {
      // Deleted while listing: no longer an object.
      if (error == std::errc::no_such_file_or_directory) {
        error.clear();
        continue;
      }
      break;
    }
    objects.push_back(ObjectInfo{std::move(name), size});
  }
  if (error) {
    return fs_io::ErrnoError(error.value(), "list", start.string());
  }
  std::sort(objects.begin(), objects.end(),
            [](const ObjectInfo& a, const ObjectInfo& b) { return a.name < b.name; });
  return objects;
}

absl::StatusOr<int> FsColdStore::SweepTemporaryFiles() {
  int removed = 0;
  std::error_code error;
  std::filesystem::recursive_directory_iterator it(root_, error), end;
  for (; !error && it != end; it.increment(error)) {
    const std::string leaf = it->path().filename().string();
    if (!absl::StartsWith(leaf, kTemporaryPrefix) || !it->is_regular_file(error)) continue;
    if (unlink(it->path().c_str()) == 0) ++removed;
  }
  if (error) return fs_io::ErrnoError(error.value(), "sweep", root_);
  return removed;
}

}  // namespace keel
