// FanOutTail: the recent events of one stream, shared by its subscribers.
//
// A subscriber that falls behind its bounded queue (OverflowPolicy::kCatchUp)
// reads what it missed from here at its own position, before it goes to the
// Replayer: with thousands of subscribers on one stream, a store read and a
// fresh copy of every event per lagging subscriber cost far more than the
// events themselves, while the tail hands out the very EventPtrs that live
// subscribers got (so per-event work downstream, such as formatting, can be
// shared too). Only a subscriber further behind than the tail reaches back
// to the Replayer.
//
// The tail holds consecutive sequences only: an event that does not follow
// the newest one (events delivered while the stream had no subscribers were
// never seen here) starts it afresh. It is bounded by an event count and
// forgets the oldest first. It may still hold events that retention has
// since deleted from the store; a reader inside the tail gets them rather
// than a gap, which loses nothing.
//
// Thread safety: Append from the delivering thread, Read from any reader;
// one mutex.
#ifndef KEEL_CORE_FANOUT_TAIL_H_
#define KEEL_CORE_FANOUT_TAIL_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/types/span.h"
#include "keel/core/mutex.h"
#include "keel/core/subscription.h"

namespace keel {

class FanOutTail {
 public:
  // What one Read found after the requested sequence.
  struct Page {
    std::vector<EventPtr> events;  // Those that match the filter, in order.
    uint64_t last_scanned = 0;     // Read on after this one next time.
    bool reached_end = false;      // Nothing newer is in the tail.
  };

  // `capacity` 0 keeps nothing (every Read misses).
  explicit FanOutTail(size_t capacity) : capacity_(capacity) {}

  // Events of one delivery, in sequence order.
  void Append(absl::Span<const EventPtr> events);

  // Up to `max` events after sequence `after` that match `filter`, or
  // nullopt when the tail does not hold the event right after `after` (it is
  // older than the tail, or the tail is empty).
  std::optional<Page> Read(uint64_t after, size_t max, const EventFilter& filter) const;

 private:
  const size_t capacity_;
  mutable Mutex mu_;
  std::deque<EventPtr> events_ ABSL_GUARDED_BY(mu_);  // Consecutive sequences.
};

}  // namespace keel

#endif  // KEEL_CORE_FANOUT_TAIL_H_
