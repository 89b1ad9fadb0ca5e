// DedupeTable: an in-memory idempotency index for one stream, for drivers
// that keep their events in memory (a persisting driver keeps its index in
// its store so that it survives a restart).
//
// A key is remembered until its expiry; Find ignores expired keys even before
// CollectExpired removes them, so the window edge is exact.
//
// Thread safety: none; the owner guards it with its stream lock.
#ifndef KEEL_CORE_DEDUPE_TABLE_H_
#define KEEL_CORE_DEDUPE_TABLE_H_

#include <map>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/core/append_plan.h"

namespace keel {

class DedupeTable {
 public:
  std::optional<DedupeHit> Find(absl::string_view key, absl::Time now) const;
  void Remember(const std::string& key, DedupeHit hit, absl::Time expires);
  // Removes keys whose expiry is at or before `now`; returns how many.
  size_t CollectExpired(absl::Time now);
  // The earliest expiry, or InfiniteFuture when the table is empty.
  absl::Time NextExpiry() const;
  size_t size() const { return by_key_.size(); }

 private:
  struct Entry {
    DedupeHit hit;
    absl::Time expires;
  };
  absl::flat_hash_map<std::string, Entry> by_key_;
  std::multimap<absl::Time, std::string> by_expiry_;
};

}  // namespace keel

#endif  // KEEL_CORE_DEDUPE_TABLE_H_
