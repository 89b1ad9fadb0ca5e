#include "keel/cmd/keel/server/connection_slots.h"

namespace keel::server {

ConnectionSlot::ConnectionSlot(ConnectionSlots& slots, std::string key)
    : slots_(slots), key_(std::move(key)) {}

ConnectionSlot::~ConnectionSlot() { slots_.Release(key_); }

ConnectionSlots::ConnectionSlots(size_t total_limit, size_t per_key_limit)
    : total_limit_(total_limit), per_key_limit_(per_key_limit) {}

std::unique_ptr<ConnectionSlot> ConnectionSlots::Acquire(absl::string_view key, Full* full) {
  MutexLock lock(&mu_);
  if (total_limit_ > 0 && open_ >= total_limit_) {
    *full = Full::kTotal;
    return nullptr;
  }
  // Counted per key only under a per-key limit: otherwise the map would
  // hold every key for nothing.
  if (per_key_limit_ > 0) {
    size_t& count = per_key_[key];
    if (count >= per_key_limit_) {
      *full = Full::kKey;
      return nullptr;
    }
    ++count;
  }
  ++open_;
  *full = Full::kNone;
  return std::make_unique<ConnectionSlot>(*this, per_key_limit_ > 0 ? std::string(key) : "");
}

void ConnectionSlots::Release(const std::string& key) {
  MutexLock lock(&mu_);
  --open_;
  if (per_key_limit_ == 0) return;
  auto it = per_key_.find(key);
  if (it != per_key_.end() && --it->second == 0) per_key_.erase(it);
}

size_t ConnectionSlots::open() const {
  MutexLock lock(&mu_);
  return open_;
}

}  // namespace keel::server
