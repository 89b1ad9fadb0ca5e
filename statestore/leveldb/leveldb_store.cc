#include "keel/statestore/leveldb/leveldb_store.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <system_error>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"
#include "leveldb/cache.h"
#include "leveldb/db.h"
#include "leveldb/env.h"
#include "leveldb/filter_policy.h"
#include "leveldb/iterator.h"
#include "leveldb/options.h"
#include "leveldb/slice.h"
#include "leveldb/status.h"
#include "leveldb/write_batch.h"
#include "keel/statestore/boot_id.h"
#include "keel/statestore/error_iterator.h"
#include "keel/statestore/leveldb/preallocated_log_env.h"
#include "keel/statestore/leveldb/table_writes_env.h"
#include "keel/statestore/leveldb/write_latch.h"

namespace keel {

// Members are destroyed in reverse order: the database before the Env, the
// cache and the filter policy it uses. The Env's background thread, which
// may rotate the database's log, stops first.
struct LevelDbStore::Handle {
  explicit Handle(std::string db_path) : path(std::move(db_path)) {}
  ~Handle() {
    if (env != nullptr) env->StopMaking();
  }

  const std::string path;
  std::unique_ptr<TableWritesEnv> table_env;  // Under env, or the database's own.
  std::unique_ptr<PreallocatedLogEnv> env;    // Null: logs are LevelDB's own files.
  std::unique_ptr<const leveldb::FilterPolicy> filter_policy;
  std::unique_ptr<leveldb::Cache> block_cache;
  WriteLatch latch{path};                    // Set by the first write that failed (write_latch.h).
  std::unique_ptr<WriteLatchEnv> latch_env;  // Outermost: wraps the logs of the others.
  std::unique_ptr<leveldb::DB> db;
};

namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
// A log ends once the memtable it feeds outgrows write_buffer_bytes, so it
// holds about that much; the margin covers the write that crosses the line.
// Bigger logs are preallocated only this far and appended to beyond it.
constexpr uint64_t kMaxPreallocatedLogBytes = 64 * kMiB;
// A thread keeps the buffer of its last write batch when its content was no
// larger than this (the buffer itself may be up to twice as large).
constexpr size_t kKeptWriteBatchBytes = kMiB;

struct Settings {
  std::string path;
  uint64_t block_cache_bytes = LevelDbStore::kDefaultBlockCacheBytes;
  uint64_t write_buffer_bytes = LevelDbStore::kDefaultWriteBufferBytes;
  leveldb::CompressionType compression = leveldb::kSnappyCompression;
  bool create_if_missing = true;
  bool preallocate_log = true;
};

uint64_t PreallocatedLogBytes(const Settings& settings) {
  return std::min(settings.write_buffer_bytes + settings.write_buffer_bytes / 8,
                  kMaxPreallocatedLogBytes);
}

absl::StatusOr<Settings> ParseSettings(const Config& config) {
  Settings settings;
  settings.path = config.GetString("path", "");
  if (settings.path.empty()) {
    return InvalidArgument("leveldb store: option 'path' is required");
  }
  KEEL_ASSIGN_OR_RETURN(settings.block_cache_bytes,
                        config.GetUint("block_cache_bytes", settings.block_cache_bytes));
  KEEL_ASSIGN_OR_RETURN(
      settings.write_buffer_bytes,
      config.GetUint("write_buffer_bytes", settings.write_buffer_bytes, 64 * 1024, 1024 * kMiB));
  std::string compression = config.GetString("compression", "snappy");
  if (compression == "none") {
    settings.compression = leveldb::kNoCompression;
  } else if (compression != "snappy") {
    return InvalidArgument(absl::StrCat("leveldb store: option 'compression' must be 'snappy' or ",
                                        "'none', not '", compression, "'"));
  }
  KEEL_ASSIGN_OR_RETURN(settings.create_if_missing,
                        config.GetBool("create_if_missing", settings.create_if_missing));
  KEEL_ASSIGN_OR_RETURN(settings.preallocate_log,
                        config.GetBool("preallocate_log", settings.preallocate_log));
  return settings;
}

absl::Status FromLevelDb(const leveldb::Status& status, absl::string_view path) {
  if (status.ok()) return absl::OkStatus();
  std::string message = absl::StrCat("leveldb store '", path, "': ", status.ToString());
  if (status.IsNotFound()) return NotFound(message);
  if (status.IsCorruption()) return absl::DataLossError(message);
  if (status.IsIOError()) return Unavailable(message);
  if (status.IsInvalidArgument()) return InvalidArgument(message);
  if (status.IsNotSupportedError()) return absl::UnimplementedError(message);
  return absl::InternalError(message);
}

absl::Status ClosedError() { return Closed("leveldb store is closed"); }

// The kernel's boot id, and the token of the last write failure recorded in
// the directory, if any (write_latch.h). A failure whose token was not
// written leaves the lifetime unknown.
std::string Lifetime(const std::string& path) {
  const std::string boot_id = KernelBootId();
  const std::optional<std::string> failure = WriteFailureToken(path);
  if (boot_id.empty() || !failure.has_value()) return boot_id;
  if (failure->empty()) return "";
  return absl::StrCat(boot_id, " after write failure ", *failure);
}

leveldb::Slice ToSlice(absl::string_view s) { return leveldb::Slice(s.data(), s.size()); }
absl::string_view ToView(const leveldb::Slice& s) { return absl::string_view(s.data(), s.size()); }

// Iterates [start, limit) of a snapshot taken at construction. Keeps the
// database alive until destroyed.
class LevelDbIterator final : public StoreIterator {
 public:
  LevelDbIterator(std::shared_ptr<LevelDbStore::Handle> handle, const KeyRange& range)
      : handle_(std::move(handle)), start_(range.start), limit_(range.limit) {
    snapshot_ = handle_->db->GetSnapshot();
    leveldb::ReadOptions options;
    options.snapshot = snapshot_;
    options.verify_checksums = true;
    // Scans would evict the blocks that point reads keep hot.
    options.fill_cache = false;
    it_.reset(handle_->db->NewIterator(options));
  }

  ~LevelDbIterator() override {
    it_.reset();  // Before the snapshot and the database go away.
    handle_->db->ReleaseSnapshot(snapshot_);
  }

  void Seek(absl::string_view target) override {
    it_->Seek(ToSlice(target < start_ ? absl::string_view(start_) : target));
    Settle();
  }

  void SeekToLast() override {
    if (limit_.empty()) {
      it_->SeekToLast();
    } else {
      it_->Seek(ToSlice(limit_));
      if (it_->Valid()) {
        it_->Prev();
      } else if (it_->status().ok()) {
        it_->SeekToLast();
      }
    }
    Settle();
  }

  bool Valid() const override { return valid_; }

  void Next() override {
    if (!valid_) return;
    it_->Next();
    Settle();
  }

  void Prev() override {
    if (!valid_) return;
    it_->Prev();
    Settle();
  }

  absl::string_view key() const override { return ToView(it_->key()); }
  absl::string_view value() const override { return ToView(it_->value()); }
  absl::Status status() const override { return FromLevelDb(it_->status(), handle_->path); }

 private:
  void Settle() {
    if (!it_->Valid()) {
      valid_ = false;
      return;
    }
    absl::string_view key = ToView(it_->key());
    valid_ = key >= start_ && (limit_.empty() || key < limit_);
  }

  const std::shared_ptr<LevelDbStore::Handle> handle_;
  const std::string start_;
  const std::string limit_;
  const leveldb::Snapshot* snapshot_ = nullptr;
  std::unique_ptr<leveldb::Iterator> it_;
  bool valid_ = false;
};

class LevelDbStoreFactory final : public StoreFactory {
 public:
  absl::string_view name() const override { return "leveldb"; }
  absl::string_view description() const override { return "LevelDB database in a directory"; }
  // As ParseSettings reads them.
  std::vector<OptionSpec> options() const override {
    const Settings defaults;
    return {
        // A daemon stores in ./data unless told otherwise.
        StringOption("path", "(required)", "the database directory").WithFlag("data-dir", "./data"),
        UintOption("block_cache_bytes", defaults.block_cache_bytes,
                   "LRU cache of uncompressed blocks"),
        UintOption("write_buffer_bytes", defaults.write_buffer_bytes,
                   "memtable size before a flush to disk, 64 KiB..1 GiB (up to twice this is "
                   "held in memory)"),
        EnumOption("compression", {"snappy", "none"}, "snappy", "compression of table files"),
        BoolOption("create_if_missing", defaults.create_if_missing,
                   "create the database when the directory holds none (false: fail instead)"),
        BoolOption("preallocate_log", defaults.preallocate_log,
                   "start each write-ahead log as a zero-filled file, so that synced writes do "
                   "not also commit a new file size"),
    };
  }
  StoreTraits Traits(const Config&) const override {
    return StoreTraits{.synced_writes_wait_for_disk = true, .keeps_data = true};
  }
  absl::StatusOr<std::unique_ptr<StateStore>> Open(const Config& config) const override {
    KEEL_ASSIGN_OR_RETURN(std::unique_ptr<LevelDbStore> store, LevelDbStore::Open(config));
    return std::unique_ptr<StateStore>(std::move(store));
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<LevelDbStore>> LevelDbStore::Open(const Config& config) {
  KEEL_ASSIGN_OR_RETURN(Settings settings, ParseSettings(config));
  auto handle = std::make_shared<Handle>(settings.path);
  handle->filter_policy.reset(leveldb::NewBloomFilterPolicy(10));
  handle->block_cache.reset(leveldb::NewLRUCache(settings.block_cache_bytes));

  leveldb::Options options;
  options.create_if_missing = settings.create_if_missing;
  options.write_buffer_size = settings.write_buffer_bytes;
  options.block_cache = handle->block_cache.get();
  options.filter_policy = handle->filter_policy.get();
  options.compression = settings.compression;
  if (settings.create_if_missing) {
    // LevelDB creates only the last path component; a missing parent is then
    // reported by DB::Open below.
    std::error_code ignored;
    std::filesystem::create_directories(settings.path, ignored);
  }
  handle->table_env = std::make_unique<TableWritesEnv>(leveldb::Env::Default());
  options.env = handle->table_env.get();
  if (settings.preallocate_log) {
    handle->env = std::make_unique<PreallocatedLogEnv>(handle->table_env.get(), settings.path,
                                                       PreallocatedLogBytes(settings));
    options.env = handle->env.get();
  }
  handle->latch_env = std::make_unique<WriteLatchEnv>(options.env, handle->latch);
  options.env = handle->latch_env.get();
  leveldb::DB* db = nullptr;
  leveldb::Status status = leveldb::DB::Open(options, settings.path, &db);
  if (!status.ok()) return FromLevelDb(status, settings.path);
  handle->db.reset(db);
  if (handle->env == nullptr) {
    // A spare an earlier run left would otherwise stay on disk for good.
    // Only now, with LevelDB holding the directory's lock: another process
    // may still have the database open.
    std::error_code ignored;
    std::filesystem::remove(std::filesystem::path(settings.path) / kSpareLogName, ignored);
  } else {
    // Compacting a key range flushes the memtable first, which starts a new
    // log; no Keel key falls in this one, so nothing else is compacted.
    handle->env->SetLogRotator([db] {
      const leveldb::Slice nothing("\0", 1);
      db->CompactRange(&nothing, &nothing);
    });
  }
  return std::unique_ptr<LevelDbStore>(new LevelDbStore(std::move(handle)));
}

LevelDbStore::LevelDbStore(std::shared_ptr<Handle> handle)
    : lifetime_(Lifetime(handle->path)), handle_(std::move(handle)) {}

LevelDbStore::~LevelDbStore() { Close().IgnoreError(); }

absl::StatusOr<std::shared_ptr<LevelDbStore::Handle>> LevelDbStore::Acquire() {
  MutexLock lock(&mu_);
  if (handle_ == nullptr) return ClosedError();
  return handle_;
}

absl::StatusOr<std::string> LevelDbStore::Get(absl::string_view key) {
  KEEL_ASSIGN_OR_RETURN(std::shared_ptr<Handle> handle, Acquire());
  leveldb::ReadOptions options;
  options.verify_checksums = true;
  std::string value;
  leveldb::Status status = handle->db->Get(options, ToSlice(key), &value);
  if (status.IsNotFound()) {
    return NotFound(absl::StrCat("key not found: '", absl::CHexEscape(key.substr(0, 64)), "'"));
  }
  if (!status.ok()) return FromLevelDb(status, handle->path);
  return value;
}

// A write that fails is the last this store takes (write_latch.h says why);
// so is one whose sync of earlier logs failed: the kernel may then have
// dropped their cached pages.
absl::Status LevelDbStore::Write(const WriteBatch& batch, const WriteOptions& options) {
  KEEL_ASSIGN_OR_RETURN(std::shared_ptr<Handle> handle, Acquire());
  if (handle->latch.failed()) return handle->latch.status();
  // Reused by the thread's next write: built afresh, its buffer grew by
  // doubling on every write, several reallocations and copies for a batch
  // of a few events. One that grew large is let go (destroyed: assigning a
  // new batch would copy into the same buffer).
  thread_local std::optional<leveldb::WriteBatch> reused;
  if (!reused) reused.emplace();
  leveldb::WriteBatch& updates = *reused;
  updates.Clear();
  for (const WriteBatch::Op& op : batch.ops()) {
    if (op.kind == WriteBatch::Op::Kind::kPut) {
      updates.Put(op.key, op.value);
    } else {
      updates.Delete(op.key);
    }
  }
  leveldb::WriteOptions write_options;
  write_options.sync = options.sync;
  // LevelDB syncs the current log only. Logs it closed before (or for) a
  // synced write may hold unsynced records written earlier: the write
  // returns once they are on disk too, so nothing written after it can
  // outlive them. Those closed before are synced first, so that a failure
  // there fails the write before it is applied (a close's write deletes
  // the open marker, which must then stay).
  const bool sync_closed_logs = options.sync && handle->env != nullptr;
  absl::Status status = sync_closed_logs ? FromLevelDb(handle->env->SyncClosedLogs(), handle->path)
                                         : absl::OkStatus();
  if (status.ok()) status = FromLevelDb(handle->db->Write(write_options, &updates), handle->path);
  if (status.ok() && sync_closed_logs) {
    status = FromLevelDb(handle->env->SyncClosedLogs(), handle->path);
  }
  if (updates.ApproximateSize() > kKeptWriteBatchBytes) reused.reset();
  if (status.ok()) return status;
  handle->latch.Fail(status);
  return handle->latch.status();
}

std::unique_ptr<StoreIterator> LevelDbStore::NewIterator(const KeyRange& range) {
  absl::StatusOr<std::shared_ptr<Handle>> handle = Acquire();
  if (!handle.ok()) return NewErrorIterator(handle.status());
  return std::make_unique<LevelDbIterator>(*std::move(handle), range);
}

absl::StatusOr<uint64_t> LevelDbStore::ApproximateSize(const KeyRange& range) {
  KEEL_ASSIGN_OR_RETURN(std::shared_ptr<Handle> handle, Acquire());
  std::string limit = range.limit;
  if (limit.empty()) {
    // No upper bound: end just past the last key.
    std::unique_ptr<leveldb::Iterator> it(handle->db->NewIterator(leveldb::ReadOptions()));
    it->SeekToLast();
    KEEL_RETURN_IF_ERROR(FromLevelDb(it->status(), handle->path));
    if (!it->Valid()) return uint64_t{0};
    limit = it->key().ToString();
    limit.push_back('\0');
  }
  if (limit <= range.start) return uint64_t{0};
  leveldb::Range leveldb_range(range.start, limit);
  uint64_t size = 0;
  handle->db->GetApproximateSizes(&leveldb_range, 1, &size);
  return size;
}

absl::Status LevelDbStore::WriteStatus() {
  KEEL_ASSIGN_OR_RETURN(std::shared_ptr<Handle> handle, Acquire());
  return handle->latch.status();
}

absl::Status LevelDbStore::Close() {
  std::shared_ptr<Handle> handle;
  {
    MutexLock lock(&mu_);
    handle = std::move(handle_);
    handle_ = nullptr;
  }
  // Deletes the database here unless an iterator or a concurrent call still
  // holds it; then the last of those deletes it.
  handle.reset();
  return absl::OkStatus();
}

}  // namespace keel

KEEL_REGISTER_STORE(leveldb, ::keel::LevelDbStoreFactory)
