// StreamWatch: wakes a subscription's worker when one of its streams gets
// an event, so that a delivery starts within a pass of the publish instead
// of after the worker's poll interval. It follows each stream with a live
// bus Subscription whose wakeup rings a Doorbell; the events themselves
// are discarded (the worker reads through its consumer groups), so each
// holds at most a few (kDropOldest).
//
// At most kMaxWatchedStreams streams are followed; past that, streams
// wait for the poll interval. The worker rings the same bell to wake for a
// stop, a pause or a redrive, and waits on it between passes.
//
// Thread safety: a StreamWatch is used by the worker's thread only; a
// Doorbell is safe anywhere.
#ifndef KEEL_CMD_KEEL_SERVER_PUSH_STREAM_WATCH_H_
#define KEEL_CMD_KEEL_SERVER_PUSH_STREAM_WATCH_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "keel/core/event_bus.h"
#include "keel/core/mutex.h"

namespace keel::push {

inline constexpr size_t kMaxWatchedStreams = 1024;

// A ring that a waiter consumes: Wait returns at once if it rang since the
// last Wait.
class Doorbell {
 public:
  void Ring();
  // Until rung or `timeout`; clears the ring.
  void Wait(absl::Duration timeout);

 private:
  Mutex mu_;
  CondVar rung_cv_;
  bool rung_ ABSL_GUARDED_BY(mu_) = false;
};

class StreamWatch {
 public:
  // `bus` must outlive the watch; `bell` is rung for every stream's events.
  StreamWatch(EventBus& bus, std::shared_ptr<Doorbell> bell);
  ~StreamWatch();
  StreamWatch(const StreamWatch&) = delete;
  StreamWatch& operator=(const StreamWatch&) = delete;

  // Follows the streams of `streams` not followed yet (within the cap) and
  // stops following those no longer in it. A stream the bus cannot
  // subscribe to is left to the poll interval.
  void Follow(const std::vector<std::string>& streams);
  // Takes what the followed streams hold, which re-arms their wakeups: call
  // before each pass, so that an event published during it rings the bell.
  void Rearm();

 private:
  EventBus& bus_;
  // Shared with the wakeups, which may still run after a Subscription ends.
  const std::shared_ptr<Doorbell> bell_;
  std::map<std::string, std::unique_ptr<Subscription>> followed_;
};

}  // namespace keel::push

#endif  // KEEL_CMD_KEEL_SERVER_PUSH_STREAM_WATCH_H_
