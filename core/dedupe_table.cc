#include "keel/core/dedupe_table.h"

namespace keel {

std::optional<DedupeHit> DedupeTable::Find(absl::string_view key, absl::Time now) const {
  auto it = by_key_.find(key);
  if (it == by_key_.end() || it->second.expires <= now) return std::nullopt;
  return it->second.hit;
}

void DedupeTable::Remember(const std::string& key, DedupeHit hit, absl::Time expires) {
  auto [it, inserted] = by_key_.insert_or_assign(key, Entry{std::move(hit), expires});
  (void)it;
  (void)inserted;
  by_expiry_.emplace(expires, key);
}

size_t DedupeTable::CollectExpired(absl::Time now) {
  size_t collected = 0;
  while (!by_expiry_.empty() && by_expiry_.begin()->first <= now) {
    auto node = by_expiry_.begin();
    auto it = by_key_.find(node->second);
    // A key remembered again later has a later expiry: keep it.
    if (it != by_key_.end() && it->second.expires <= now) {
      by_key_.erase(it);
      ++collected;
    }
    by_expiry_.erase(node);
  }
  return collected;
}

absl::Time DedupeTable::NextExpiry() const {
  return by_expiry_.empty() ? absl::InfiniteFuture() : by_expiry_.begin()->first;
}

}  // namespace keel
