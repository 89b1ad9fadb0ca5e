#include "keel/drivers/durable/segment_cache.h"

#include <utility>

namespace keel::durable {

std::shared_ptr<const SegmentEntries> SegmentCache::Find(absl::string_view object,
                                                         uint64_t sequence) {
  MutexLock lock(&mu_);
  for (auto it = slots_.begin(); it != slots_.end(); ++it) {
    if (it->object != object) continue;
    if (sequence < it->entries->first() || sequence > it->entries->entries.back().sequence) {
      return nullptr;
    }
    slots_.splice(slots_.begin(), slots_, it);
    return slots_.front().entries;
  }
  return nullptr;
}

void SegmentCache::Insert(absl::string_view object, std::shared_ptr<const SegmentEntries> entries) {
  MutexLock lock(&mu_);
  for (auto it = slots_.begin(); it != slots_.end(); ++it) {
    if (it->object != object) continue;
    bytes_ -= it->entries->bytes;
    slots_.erase(it);
    break;
  }
  bytes_ += entries->bytes;
  slots_.push_front(Slot{std::string(object), std::move(entries)});
  while (bytes_ > capacity_ && slots_.size() > 1) {
    bytes_ -= slots_.back().entries->bytes;
    slots_.pop_back();
  }
}

}  // namespace keel::durable
