// MemoryStore: the "memory" StateStore, an ordered map in process memory.
//
// Nothing survives the process, and WriteOptions::sync is accepted but has no
// effect. Useful for tests and for drivers that want the StateStore code path
// without a disk. Open by name with OpenStore("memory", {}) (it takes no
// options) or construct directly.
//
// Iterators copy the entries of their range when created, so they are
// isolated from later writes (and from Close()) at the cost of O(range)
// memory per iterator.
//
// Thread safety: all methods are safe to call concurrently; an iterator is
// used by one thread at a time.
#ifndef KEEL_STATESTORE_MEMORY_MEMORY_STORE_H_
#define KEEL_STATESTORE_MEMORY_MEMORY_STORE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/core/mutex.h"
#include "keel/statestore/state_store.h"

namespace keel {

class MemoryStore final : public StateStore {
 public:
  MemoryStore() = default;

  absl::StatusOr<std::string> Get(absl::string_view key) override;
  absl::Status Write(const WriteBatch& batch, const WriteOptions& options) override;
  std::unique_ptr<StoreIterator> NewIterator(const KeyRange& range) override;
  // The bytes of keys and values in `range`.
  absl::StatusOr<uint64_t> ApproximateSize(const KeyRange& range) override;
  absl::Status Close() override;

 private:
  using Map = std::map<std::string, std::string, std::less<>>;

  Mutex mu_;
  Map entries_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace keel

#endif  // KEEL_STATESTORE_MEMORY_MEMORY_STORE_H_
