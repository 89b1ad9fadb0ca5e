#include "keel/drivers/jetstream/position_cache.h"

#include <algorithm>

namespace keel::jetstream {
namespace {

constexpr size_t kPerStream = 256;
constexpr size_t kStreams = 10'000;

}  // namespace

void PositionCache::Note(absl::string_view stream, uint64_t first, uint64_t js_seq) {
  MutexLock lock(&mu_);
  auto it = streams_.find(stream);
  if (it == streams_.end()) {
    if (streams_.size() >= kStreams) streams_.clear();
    it = streams_.emplace(std::string(stream), std::map<uint64_t, uint64_t>()).first;
  }
  std::map<uint64_t, uint64_t>& positions = it->second;
  auto [entry, inserted] = positions.emplace(first, js_seq);
  if (!inserted) entry->second = std::min(entry->second, js_seq);
  if (positions.size() > kPerStream) positions.erase(positions.begin());
}

PositionCache::Range PositionCache::Around(absl::string_view stream, uint64_t sequence) const {
  Range range;
  MutexLock lock(&mu_);
  auto it = streams_.find(stream);
  if (it == streams_.end()) return range;
  const std::map<uint64_t, uint64_t>& positions = it->second;
  auto later = positions.upper_bound(sequence);
  // A record starting past `sequence` holds a later one.
  if (later != positions.end()) range.at_most = later->second;
  // Records before one starting at or below `sequence` end at or below it.
  if (later != positions.begin()) range.after = std::prev(later)->second - 1;
  return range;
}

}  // namespace keel::jetstream
