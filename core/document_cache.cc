#include "keel/core/document_cache.h"

namespace keel {

// Key, body and the map's own share of an entry.
size_t DocumentCache::Cost(const std::string& key, const Entry& entry) {
  constexpr size_t kOverhead = 64;
  return kOverhead + key.size() + (entry ? entry->body.size() : 0);
}

std::optional<DocumentCache::Entry> DocumentCache::Find(const std::string& key) const {
  MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

uint64_t DocumentCache::evictions() const {
  MutexLock lock(&mu_);
  return evictions_;
}

void DocumentCache::Fill(const std::string& key, const Entry& entry, uint64_t evictions_before) {
  MutexLock lock(&mu_);
  if (evictions_ != evictions_before || entries_.contains(key)) return;
  InsertLocked(key, entry);
}

void DocumentCache::Put(const std::string& key, const DocumentRecord& record) {
  MutexLock lock(&mu_);
  if (auto it = entries_.find(key); it != entries_.end()) {
    bytes_ -= Cost(key, it->second);
    entries_.erase(it);
  }
  InsertLocked(key, record);
}

void DocumentCache::InsertLocked(const std::string& key, const Entry& entry) {
  const size_t cost = Cost(key, entry);
  if (cost > max_bytes_ / 16) {
    // Too big to be worth the room: the key stays uncached. That counts as
    // an eviction, so that a publisher's read from before cannot fill it.
    ++evictions_;
    return;
  }
  while (bytes_ + cost > max_bytes_ && !entries_.empty()) {
    auto victim = entries_.begin();
    bytes_ -= Cost(victim->first, victim->second);
    entries_.erase(victim);
    ++evictions_;
  }
  bytes_ += cost;
  entries_.emplace(key, entry);
}

}  // namespace keel
