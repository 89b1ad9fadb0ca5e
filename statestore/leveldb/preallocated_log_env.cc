#include "keel/statestore/leveldb/preallocated_log_env.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "keel/core/logger.h"
#include "keel/core/mutex.h"
#include "keel/statestore/leveldb/posix_files.h"

namespace keel {
namespace {

// Records up to this size are gathered in memory and written by Flush(), as
// LevelDB's own files do; larger ones are written straight through.
constexpr size_t kBufferBytes = size_t{64} << 10;
// The spare is zero-filled in chunks of this size.
constexpr size_t kZeroChunkBytes = size_t{1} << 20;
// A log created without a spare asks for one once this much is written, so
// that databases which never write this much (tests) never make one.
constexpr uint64_t kPlainLogAskBytes = uint64_t{1} << 20;
// A log's spare is made only once that log has carried this many synced
// writes: a store that syncs only now and then (at creation and close, as
// the durable driver does with sync=none) gains nothing from one and would
// pay for writing every log twice.
constexpr int kSyncedWritesPerLog = 16;

// Writes all of [data, data + size) at `offset`.
leveldb::Status WriteAt(int fd, const std::string& name, const char* data, size_t size,
                        uint64_t offset) {
  while (size > 0) {
    ssize_t written = ::pwrite(fd, data, size, static_cast<off_t>(offset));
    if (written < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(name, errno);
    }
    data += written;
    size -= static_cast<size_t>(written);
    offset += static_cast<uint64_t>(written);
  }
  return leveldb::Status::OK();
}

// The first `bytes` of `fd` mapped shared for writing, or null. The blocks
// must be allocated already (fallocate): a store through
// the map into a hole of a full disk would raise SIGBUS instead of failing
// a write.
char* MapForWriting(int fd, uint64_t bytes) {
  if (bytes == 0) return nullptr;
  void* map = ::mmap(nullptr, static_cast<size_t>(bytes), PROT_WRITE, MAP_SHARED, fd, 0);
  return map == MAP_FAILED ? nullptr : static_cast<char*>(map);
}

// A log file, new and empty or a zero-filled spare: records are written at
// the running offset rather than appended, so in a spare Sync() is an
// fdatasync() of data only while the log stays within its preallocation.
// Once `ask_at` bytes are written and kSyncedWritesPerLog syncs made, calls
// `ask` (once), so that the next log's spare is made while this one fills.
//
// Within `map` (a plain log's first `map_bytes`, mapped shared) a record is
// copied into the page cache and Flush() has nothing to do: LevelDB flushes
// after every record, and a write(2) per record was the largest single cost
// of a publish that does not sync. A killed process loses nothing that way
// either (the pages are the file's), and Sync() stays an fdatasync(), which
// writes pages dirtied through a map as any other. Past the map, records
// go through the buffer and pwrite as before.
class PreallocatedLogFile final : public leveldb::WritableFile {
 public:
  PreallocatedLogFile(std::string name, int fd, char* map, uint64_t map_bytes, uint64_t ask_at,
                      std::function<void()> ask,
                      std::function<void(const std::string&)> closed_unsynced)
      : name_(std::move(name)),
        fd_(fd),
        map_(map),
        map_bytes_(map != nullptr ? map_bytes : 0),
        ask_at_(ask_at),
        ask_(std::move(ask)),
        closed_unsynced_(std::move(closed_unsynced)) {}
  ~PreallocatedLogFile() override {
    if (fd_ >= 0) Close();
  }

  leveldb::Status Append(const leveldb::Slice& data) override {
    if (buffer_.empty() && offset_ + data.size() <= map_bytes_) {
      std::memcpy(map_ + offset_, data.data(), data.size());
      Advance(data.size());
      return leveldb::Status::OK();
    }
    if (buffer_.size() + data.size() <= kBufferBytes) {
      buffer_.append(data.data(), data.size());
      return leveldb::Status::OK();
    }
    leveldb::Status status = Flush();
    if (!status.ok()) return status;
    return Write(data.data(), data.size());
  }

  leveldb::Status Flush() override {
    // LevelDB flushes after every record and Sync() flushes again: the
    // second finds nothing, and costs no system call.
    if (buffer_.empty()) return leveldb::Status::OK();
    leveldb::Status status = Write(buffer_.data(), buffer_.size());
    buffer_.clear();
    return status;
  }

  leveldb::Status Sync() override {
    leveldb::Status status = Flush();
    if (!status.ok()) return status;
    if (::fdatasync(fd_) != 0) return ErrnoError(name_, errno);
    unsynced_ = false;
    ++syncs_;
    MaybeAsk();
    return status;
  }

  // LevelDB closes a log when it starts the next one, without syncing it.
  // A log closed with unsynced records is handed to `closed_unsynced`: the
  // next synced write syncs it (PreallocatedLogEnv::SyncClosedLogs), unless
  // LevelDB deleted it first (its memtable then is in a synced table). Not
  // here: syncing under LevelDB's mutex held every writer for a whole log's
  // writeback, and even starting that writeback (sync_file_range) wrote logs
  // that sync=none would otherwise delete unwritten (-15% and -10% for
  // 100-event publishes with sync=none).
  leveldb::Status Close() override {
    leveldb::Status status = Flush();
    if (map_ != nullptr) {
      ::munmap(map_, static_cast<size_t>(map_bytes_));
      map_ = nullptr;
      map_bytes_ = 0;
    }
    if (status.ok() && unsynced_) closed_unsynced_(name_);
    if (::close(fd_) != 0 && status.ok()) status = ErrnoError(name_, errno);
    fd_ = -1;
    return status;
  }

 private:
  leveldb::Status Write(const char* data, size_t size) {
    leveldb::Status status = WriteAt(fd_, name_, data, size, offset_);
    if (status.ok()) Advance(size);
    return status;
  }

  void Advance(size_t written) {
    offset_ += written;
    unsynced_ = true;
    MaybeAsk();
  }

  void MaybeAsk() {
    if (ask_ && offset_ >= ask_at_ && syncs_ >= kSyncedWritesPerLog) {
      ask_();
      ask_ = nullptr;
    }
  }

  const std::string name_;
  int fd_;
  char* map_;  // Null: not mapped.
  uint64_t map_bytes_;
  const uint64_t ask_at_;
  std::function<void()> ask_;  // Null once called.
  const std::function<void(const std::string&)> closed_unsynced_;
  uint64_t offset_ = 0;
  int syncs_ = 0;
  bool unsynced_ = false;  // Written since the last Sync().
  std::string buffer_;
};

}  // namespace

PreallocatedLogEnv::PreallocatedLogEnv(leveldb::Env* base, std::string directory,
                                       uint64_t log_bytes)
    : EnvWrapper(base),
      directory_(std::move(directory)),
      log_bytes_(log_bytes),
      spare_path_(absl::StrCat(directory_, "/", kSpareLogName)),
      making_path_(absl::StrCat(spare_path_, ".tmp")),
      maker_([this] { RunMaker(); }) {}

PreallocatedLogEnv::~PreallocatedLogEnv() { StopMaking(); }

void PreallocatedLogEnv::StopMaking() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    wake_.SignalAll();
  }
  if (maker_.joinable()) maker_.join();
}

void PreallocatedLogEnv::SetLogRotator(std::function<void()> rotate) {
  MutexLock lock(&mu_);
  rotate_ = std::move(rotate);
}

leveldb::Status PreallocatedLogEnv::NewWritableFile(const std::string& name,
                                                    leveldb::WritableFile** result) {
  *result = nullptr;
  if (!IsLogFile(name)) return target()->NewWritableFile(name, result);
  int fd = -1;
  const bool preallocated = TakeSpare(name);
  if (preallocated) {
    // The name must be durable before a record in it is acknowledged: a
    // synced write no longer commits file metadata.
    leveldb::Status status = SyncDirectory(directory_);
    if (!status.ok()) return status;
    fd = ::open(name.c_str(), O_RDWR | O_CLOEXEC);
  } else {
    fd = ::open(name.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  }
  if (fd < 0) return ErrnoError(name, errno);
  // A plain log reserves its blocks (no zeros written: unlike a spare's,
  // its syncs still commit metadata) and is written through a map. Where
  // the reservation fails (a full disk, a file system without fallocate),
  // it is written with pwrite. A spare is written with pwrite too: a store
  // syncs often once it has spares, and 64 synced publishers ran 30-40%
  // slower through a map (each sync makes the next store into the tail
  // page fault again).
  char* map = nullptr;
  if (!preallocated && ::fallocate(fd, 0, 0, static_cast<off_t>(log_bytes_)) == 0) {
    map = MapForWriting(fd, log_bytes_);
  }
  // A quarter, not a half: a log of small records can end (the memtable
  // holding them is full) before it is half written. A plain log asks
  // early; for the first log, the spare then replaces it (see RunMaker).
  const uint64_t ask_at =
      preallocated ? log_bytes_ / 4 : std::min(kPlainLogAskBytes, log_bytes_ / 4);
  *result = new PreallocatedLogFile(
      name, fd, map, log_bytes_, ask_at, [this] { WantSpare(); },
      [this](const std::string& log) {
        MutexLock lock(&mu_);
        closed_unsynced_.push_back(log);
      });
  return leveldb::Status::OK();
}

leveldb::Status PreallocatedLogEnv::SyncClosedLogs() {
  std::vector<std::string> logs;
  {
    MutexLock lock(&mu_);
    logs.swap(closed_unsynced_);
  }
  for (size_t i = 0; i < logs.size(); ++i) {
    const int fd = ::open(logs[i].c_str(), O_RDONLY | O_CLOEXEC);
    // Gone: LevelDB deletes a log once its memtable is in a synced table.
    if (fd < 0 && errno == ENOENT) continue;
    leveldb::Status status;
    if (fd < 0 || ::fdatasync(fd) != 0) status = ErrnoError(logs[i], errno);
    if (fd >= 0) ::close(fd);
    if (!status.ok()) {
      MutexLock lock(&mu_);  // Tried again by the next synced write.
      closed_unsynced_.insert(closed_unsynced_.end(), logs.begin() + i, logs.end());
      return status;
    }
  }
  return leveldb::Status::OK();
}

// LevelDB names its write-ahead logs "<directory>/<digits>.log".
bool PreallocatedLogEnv::IsLogFile(const std::string& name) const {
  absl::string_view base(name);
  if (!absl::ConsumePrefix(&base, directory_) || !absl::ConsumePrefix(&base, "/") ||
      !absl::ConsumeSuffix(&base, ".log") || base.empty()) {
    return false;
  }
  for (char c : base) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// Renames the spare to `name` if one is ready. The first call, made once
// LevelDB holds the directory's lock, looks for the spare a previous run left
// and removes one of another size (write_buffer_bytes changed).
bool PreallocatedLogEnv::TakeSpare(const std::string& name) {
  MutexLock lock(&mu_);
  if (logs_created_ == 0) {
    struct stat info;
    if (::stat(spare_path_.c_str(), &info) == 0) {
      spare_ready_ = static_cast<uint64_t>(info.st_size) == log_bytes_;
      if (!spare_ready_) ::unlink(spare_path_.c_str());
    }
  }
  ++logs_created_;
  bool taken = spare_ready_ && ::rename(spare_path_.c_str(), name.c_str()) == 0;
  spare_ready_ = false;
  spare_wanted_ = false;  // Until the new log asks.
  log_preallocated_ = taken;
  return taken;
}

void PreallocatedLogEnv::WantSpare() {
  MutexLock lock(&mu_);
  spare_wanted_ = true;
  wake_.SignalAll();
}

// Makes a spare once the current log has asked for one. After a failure,
// waits for the next log to ask rather than retrying in a loop.
void PreallocatedLogEnv::RunMaker() {
  MutexLock lock(&mu_);
  while (true) {
    while (!stopping_ && !(spare_wanted_ && !spare_ready_)) wake_.Wait(&mu_);
    if (stopping_) return;
    spare_wanted_ = false;
    mu_.Unlock();
    leveldb::Status status = MakeSpare();
    mu_.Lock();
    if (status.ok()) {
      spare_ready_ = true;
      if (logs_created_ == 1 && !log_preallocated_ && rotate_ && !stopping_) {
        // The first log was created plain (a fresh database): move to the
        // spare now rather than after a whole log of slower syncs. Only the
        // first: a later plain log (its spare was late) may start while the
        // previous memtable is still being flushed, and rotating then would
        // hold every writer until that flush ends. Without the lock:
        // rotating creates a log.
        std::function<void()> rotate = rotate_;
        mu_.Unlock();
        rotate();
        mu_.Lock();
      }
    } else if (!stopping_) {
      Logger::Default()->Warn(absl::StrCat("leveldb store '", directory_,
                                           "': cannot preallocate the next log, so its ",
                                           "synced writes will be slower: ", status.ToString()));
    }
  }
}

// Writes log_bytes_ of zeros to a temporary file, syncs it and renames it to
// the spare's name, so that a spare found at start is always complete.
leveldb::Status PreallocatedLogEnv::MakeSpare() {
  int fd = ::open(making_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError(making_path_, errno);
  static const std::vector<char> kZeros(kZeroChunkBytes, '\0');
  // Reserves the space first, so a full disk fails here rather than after
  // writing zeros into the space LevelDB's compactions need.
  leveldb::Status status;
  if (int error = ::posix_fallocate(fd, 0, static_cast<off_t>(log_bytes_)); error != 0) {
    status = ErrnoError(making_path_, error);
  }
  for (uint64_t offset = 0; status.ok() && offset < log_bytes_; offset += kZeroChunkBytes) {
    if (stopping_.load(std::memory_order_relaxed)) {
      status = leveldb::Status::IOError(making_path_, "stopped");
      break;
    }
    size_t size = static_cast<size_t>(std::min<uint64_t>(kZeroChunkBytes, log_bytes_ - offset));
    status = WriteAt(fd, making_path_, kZeros.data(), size, offset);
  }
  if (status.ok() && ::fdatasync(fd) != 0) status = ErrnoError(making_path_, errno);
  if (::close(fd) != 0 && status.ok()) status = ErrnoError(making_path_, errno);
  if (status.ok() && ::rename(making_path_.c_str(), spare_path_.c_str()) != 0) {
    status = ErrnoError(spare_path_, errno);
  }
  if (!status.ok()) ::unlink(making_path_.c_str());
  return status;
}

}  // namespace keel
