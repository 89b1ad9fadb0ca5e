// StateStore: the ordered key-value store under durable drivers (LevelDB-Env
// style: one small interface, several implementations chosen by name).
//
// Keys and values are binary strings ordered bytewise; integers inside keys
// are fixed-width big-endian so that numeric order equals key order. A
// WriteBatch is applied atomically: after a crash either all of it or none of
// it is visible. `WriteOptions::sync` makes Write return only once the batch
// is durable on disk.
//
// Implementations: "memory" (an ordered map) and "leveldb", registered in
// StoreRegistry(); FaultInjectingStore (statestore/fault_injecting_store.h)
// wraps any store for tests.
//
// Thread safety: all methods are safe to call concurrently. An Iterator is
// used by one thread at a time and sees a consistent snapshot taken at
// NewIterator().
#ifndef KEEL_STATESTORE_STATE_STORE_H_
#define KEEL_STATESTORE_STATE_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/core/config.h"
#include "keel/core/option_spec.h"
#include "keel/core/registry.h"

namespace keel {

// A sequence of puts and deletes applied atomically by StateStore::Write.
class WriteBatch {
 public:
  struct Op {
    enum class Kind { kPut, kDelete };
    Kind kind;
    std::string key;
    std::string value;  // Empty for kDelete.
  };

  void Put(absl::string_view key, absl::string_view value);
  // As Put, taking ownership of the strings instead of copying them (a
  // distinct name: an overload would make Put("k", "v") ambiguous).
  void PutOwned(std::string key, std::string value);
  void Delete(absl::string_view key);
  void Append(const WriteBatch& other);
  // Room for `ops` operations in all: a batch built op by op otherwise
  // reallocates as it grows.
  void Reserve(size_t ops) { ops_.reserve(ops); }
  void Clear() { ops_.clear(); bytes_ = 0; }

  const std::vector<Op>& ops() const { return ops_; }
  size_t size() const { return ops_.size(); }
  bool empty() const { return ops_.empty(); }
  size_t ApproximateBytes() const { return bytes_; }

 private:
  std::vector<Op> ops_;
  size_t bytes_ = 0;
};

struct WriteOptions {
  bool sync = false;
};

// Iterates keys in [start, limit) in ascending order. Usage:
//   for (it->Seek(start); it->Valid(); it->Next()) { ... }
//   KEEL_RETURN_IF_ERROR(it->status());
class StoreIterator {
 public:
  virtual ~StoreIterator() = default;
  virtual void Seek(absl::string_view target) = 0;   // First key >= target (< limit).
  virtual void SeekToLast() = 0;                     // Last key < limit (>= start).
  virtual bool Valid() const = 0;
  virtual void Next() = 0;
  virtual void Prev() = 0;
  virtual absl::string_view key() const = 0;   // Requires Valid().
  virtual absl::string_view value() const = 0; // Requires Valid().
  virtual absl::Status status() const = 0;    // Non-OK on corruption or I/O error.
};

struct KeyRange {
  std::string start;  // Inclusive.
  std::string limit;  // Exclusive; empty = no upper bound.

  static KeyRange Prefix(absl::string_view prefix);  // Every key starting with prefix.
};

class StateStore {
 public:
  virtual ~StateStore() = default;

  // kNotFound when the key is absent.
  virtual absl::StatusOr<std::string> Get(absl::string_view key) = 0;
  virtual absl::Status Write(const WriteBatch& batch, const WriteOptions& options) = 0;
  virtual std::unique_ptr<StoreIterator> NewIterator(const KeyRange& range) = 0;
  // Approximate bytes used by keys in `range`.
  virtual absl::StatusOr<uint64_t> ApproximateSize(const KeyRange& range) = 0;
  // Flushes and releases the store; later calls fail with kClosed. Idempotent.
  virtual absl::Status Close() = 0;

  // Names how long this store keeps an unsynced write (WriteOptions::sync
  // false) once Write returned OK: the write survives the death of the
  // process that made it, and a later open reads it, for as long as this
  // returns the same value; only the end of that span (the machine
  // stopping) can lose it. Empty, the default, when the store cannot tell
  // or keeps such writes in the process. At most kMaxLifetimeBytes; a
  // longer one counts as empty. The durable driver compares it across an
  // unclean shutdown to tell a killed process, which lost nothing, from a
  // stopped machine (rfcs/0003-durable-layout.md, "Epochs").
  virtual std::string UnsyncedWritesLifetime() const { return ""; }
  static constexpr size_t kMaxLifetimeBytes = 255;

  // OK while the store takes writes; else the error every Write now fails
  // with, for as long as the store is open (LevelDB: after a write that
  // failed, leveldb_store.h). A write may still fail while this is OK.
  virtual absl::Status WriteStatus() { return absl::OkStatus(); }
};

// How the stores a factory opens with a given Config behave. Each default
// is the one that promises nothing.
struct StoreTraits {
  // A synced write (WriteOptions::sync) waits for a disk.
  bool synced_writes_wait_for_disk = true;
  // What is written outlives the process: a later Open with the same
  // Config reads it.
  bool keeps_data = false;
};

// Like a DriverFactory (core/driver_factory.h), a store factory describes
// itself: OpenStore refuses a Config with a key options() does not declare
// or a value not of the declared type.
class StoreFactory {
 public:
  virtual ~StoreFactory() = default;
  virtual absl::string_view name() const = 0;
  virtual absl::string_view description() const = 0;
  // Every option the store takes (leveldb: path, block_cache_bytes, ...).
  // The default declares none: such a store takes no options.
  virtual std::vector<OptionSpec> options() const { return {}; }
  // Called with a Config that ValidateStoreOptions accepted.
  virtual StoreTraits Traits(const Config& config) const { return StoreTraits{}; }
  // Called by OpenStore with a Config that ValidateStoreOptions accepted.
  virtual absl::StatusOr<std::unique_ptr<StateStore>> Open(const Config& config) const = 0;
};

Registry<StoreFactory>& StoreRegistry();

// OK when `config` holds only options `factory` declares, each of its
// declared type; else kInvalidArgument naming the store, the key and the
// valid options.
absl::Status ValidateStoreOptions(const StoreFactory& factory, const Config& config);

// Looks up `name`, checks `config` (ValidateStoreOptions) and opens the
// store.
absl::StatusOr<std::unique_ptr<StateStore>> OpenStore(absl::string_view name, const Config& config);

// Appends `value` as 8 big-endian bytes; DecodeBigEndian64 reads them back.
void AppendBigEndian64(std::string& out, uint64_t value);
uint64_t DecodeBigEndian64(absl::string_view bytes);  // Requires bytes.size() >= 8.

}  // namespace keel

#define KEEL_REGISTER_STORE(ident, FactoryT)                                            \
  namespace {                                                                           \
  const bool keel_store_registered_##ident =                                            \
      ::keel::RegisterOrDie(::keel::StoreRegistry(), std::make_shared<FactoryT>());     \
  }                                                                                     \
  extern "C" void KeelForceLinkStore_##ident() {}

#define KEEL_DECLARE_STORE_HOOK(ident) extern "C" void KeelForceLinkStore_##ident()
#define KEEL_FORCE_LINK_STORE(ident) KeelForceLinkStore_##ident()

#endif  // KEEL_STATESTORE_STATE_STORE_H_
