// SegmentCache: the checked entries of the cold segments read last.
//
// A sequential replay reads a segment in many pages (1,000 events a page in
// segments of 4,096), each page starting inside the segment the previous
// one stopped in. Without the cache each page opens the segment again
// (footer, header, index) and reads and checks every block from its start
// to the segment's end; with it a segment is read and checked once and the
// following pages take their entries from memory. Segments never change
// once written, so a cached entry is never stale; one that expired is no
// longer looked up (the tier finds its segment in the live index first)
// and ages out. Bounded by the entries' bytes, least recently used out
// first; the last inserted is always kept.
//
// Thread safety: thread-safe.
#ifndef KEEL_DRIVERS_DURABLE_SEGMENT_CACHE_H_
#define KEEL_DRIVERS_DURABLE_SEGMENT_CACHE_H_

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "keel/coldstore/segment/segment.h"
#include "keel/core/mutex.h"

namespace keel::durable {

// Entries of one segment, consecutive, from entries.front().sequence to
// the segment's last (not empty).
struct SegmentEntries {
  std::vector<SegmentEntry> entries;
  uint64_t bytes = 0;  // Their values' bytes.

  uint64_t first() const { return entries.front().sequence; }
};

class SegmentCache {
 public:
  explicit SegmentCache(uint64_t capacity_bytes) : capacity_(capacity_bytes) {}

  // The cached entries of `object` when they hold `sequence`, else null.
  std::shared_ptr<const SegmentEntries> Find(absl::string_view object, uint64_t sequence);
  // Keeps `entries` (not empty) of `object`, replacing what it held of it.
  void Insert(absl::string_view object, std::shared_ptr<const SegmentEntries> entries);

 private:
  struct Slot {
    std::string object;
    std::shared_ptr<const SegmentEntries> entries;
  };

  const uint64_t capacity_;
  Mutex mu_;
  std::list<Slot> slots_ ABSL_GUARDED_BY(mu_);  // Most recently used first.
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace keel::durable

#endif  // KEEL_DRIVERS_DURABLE_SEGMENT_CACHE_H_
