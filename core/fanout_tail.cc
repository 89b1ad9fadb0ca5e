#include "keel/core/fanout_tail.h"

namespace keel {

void FanOutTail::Append(absl::Span<const EventPtr> events) {
  if (capacity_ == 0) return;
  MutexLock lock(&mu_);
  for (const EventPtr& event : events) {
    if (!events_.empty() && event->sequence != events_.back()->sequence + 1) events_.clear();
    events_.push_back(event);
    if (events_.size() > capacity_) events_.pop_front();
  }
}

std::optional<FanOutTail::Page> FanOutTail::Read(uint64_t after, size_t max,
                                                 const EventFilter& filter) const {
  ReaderMutexLock lock(&mu_);
  if (events_.empty()) return std::nullopt;
  const uint64_t first = events_.front()->sequence;
  const uint64_t last = events_.back()->sequence;
  if (after + 1 < first) return std::nullopt;
  Page page;
  page.last_scanned = after;
  for (uint64_t sequence = after + 1; sequence <= last && page.events.size() < max; ++sequence) {
    const EventPtr& event = events_[sequence - first];
    page.last_scanned = sequence;
    if (filter.Matches(*event)) page.events.push_back(event);
  }
  page.reached_end = page.last_scanned >= last;
  return page;
}

}  // namespace keel
