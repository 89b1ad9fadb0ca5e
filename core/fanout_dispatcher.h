// Internal: the delivery thread of one FanOut (core/fanout.h).
//
// A stream with many subscribers costs its publisher one Offer and one
// wakeup per subscriber for every batch when delivered on the publishing
// thread; with thousands of subscribers that is milliseconds per publish,
// paid before the publish is answered. FanOut hands such batches to this
// dispatcher instead: Enqueue only appends the events to the stream's
// pending list, and one thread offers them. While it offers one round,
// further batches of the stream accumulate and leave together in the next
// round, so a subscriber is offered (and woken) once per round rather than
// once per batch.
//
// Order: a stream is offered by at most one round at a time, its events in
// the order they were enqueued. Busy(stream) stays true until everything
// enqueued for the stream has been offered, so a caller that delivers
// inline when the stream is not busy keeps the stream in order.
//
// Memory: at most `max_backlog` events wait; Enqueue then waits for room
// (events are already stored; this only bounds the pointers held here).
//
// Thread safety: all methods are safe to call concurrently; Enqueue for one
// stream must not run concurrently with itself (drivers deliver each stream
// from one place at a time).
#ifndef KEEL_CORE_FANOUT_DISPATCHER_H_
#define KEEL_CORE_FANOUT_DISPATCHER_H_

#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "keel/core/mutex.h"
#include "keel/core/subscription.h"

namespace keel {

class FanOutHub;

class FanOutDispatcher {
 public:
  FanOutDispatcher(std::shared_ptr<FanOutHub> hub, size_t max_backlog);
  ~FanOutDispatcher();  // Stop().
  FanOutDispatcher(const FanOutDispatcher&) = delete;
  FanOutDispatcher& operator=(const FanOutDispatcher&) = delete;

  // True while events of `stream` are waiting or being offered.
  bool Busy(absl::string_view stream) const;

  // Queues `events` of `stream` for the delivery thread (started on first use).
  void Enqueue(absl::string_view stream, absl::Span<const EventPtr> events);

  // Waits until everything enqueued so far has been offered.
  void Flush();

  // Offers what is queued, then ends the thread. Call once the hub is
  // closed: later Enqueue calls are ignored.
  void Stop();

 private:
  void Run();

  const std::shared_ptr<FanOutHub> hub_;
  const size_t max_backlog_;

  mutable Mutex mu_;
  CondVar work_;     // Something was enqueued, or Stop().
  CondVar changed_;  // A round ended: room in the backlog, maybe idle.
  // Streams with events waiting or being offered, and their waiting events.
  absl::flat_hash_map<std::string, std::vector<EventPtr>> pending_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> ready_ ABSL_GUARDED_BY(mu_);  // Streams to offer next, FIFO.
  size_t backlog_ ABSL_GUARDED_BY(mu_) = 0;            // Events waiting.
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_ ABSL_GUARDED_BY(mu_);
};

}  // namespace keel

#endif  // KEEL_CORE_FANOUT_DISPATCHER_H_
