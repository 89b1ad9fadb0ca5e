// DocumentCache: the latest records of recently written documents
// (core/document_record.h), as the bus's MetadataStore holds them, so that
// a collection's write need not read the store on the committing thread,
// which runs one append at a time (core/collection_service.h).
//
// The committing thread, the only writer of document records, keeps it
// true: Put after a write holds, Fill with what it read. Publishers' reads
// race with writes, so their Fill is taken only if nothing was evicted
// since the read began (an evicted record might be the one their read
// predates) and the key is not cached. Bounded by bytes; a full cache
// evicts arbitrary entries.
//
// Thread safety: every method may be called concurrently.
#ifndef KEEL_CORE_DOCUMENT_CACHE_H_
#define KEEL_CORE_DOCUMENT_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "keel/core/document_record.h"
#include "keel/core/mutex.h"

namespace keel {

class DocumentCache {
 public:
  // What the store holds for a key: its record, or nullopt for none.
  using Entry = std::optional<DocumentRecord>;

  explicit DocumentCache(size_t max_bytes) : max_bytes_(max_bytes) {}

  // nullopt when `key` is not cached.
  std::optional<Entry> Find(const std::string& key) const;
  // Counts evictions: a publisher reads it before reading the store.
  uint64_t evictions() const;
  // Caches `entry`, read from the store after evictions() returned
  // `evictions_before`, unless the key is cached or anything was evicted
  // since.
  void Fill(const std::string& key, const Entry& entry, uint64_t evictions_before);
  // After the store took `record` for `key`.
  void Put(const std::string& key, const DocumentRecord& record);

 private:
  static size_t Cost(const std::string& key, const Entry& entry);
  void InsertLocked(const std::string& key, const Entry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t max_bytes_;
  mutable Mutex mu_;
  absl::flat_hash_map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t evictions_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace keel

#endif  // KEEL_CORE_DOCUMENT_CACHE_H_
