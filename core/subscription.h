// Subscription: a live (and optionally replay-then-live) feed of one stream.
//
// Events reach a subscription in sequence order after they are persisted.
// Each subscription has a bounded queue; when the queue is full the overflow
// policy decides:
//   kCatchUp    (default where the driver can replay) stop queueing; when the
//               reader drains the queue it reads the missed events from the
//               stream's recent tail, shared by its subscribers, or, when it
//               is further behind, from the Replayer, and rejoins live.
//               Nothing is lost, memory stays bounded.
//   kDropOldest drop the oldest queued event and, at most once per
//               `notice_window`, deliver a `bus.dropped` notice that names the
//               exact dropped sequences.
//   kDisconnect end the subscription with kSlowConsumer.
//
// Follow: a subscription that starts at a past position replays from the
// Replayer and joins live with no event lost and none repeated across the
// seam, while publishers keep running. A retention gap during replay is
// reported as a `bus.gap` notice and reading continues at the oldest event.
//
// Notices are Events with sequence 0 and type kDroppedNoticeType or
// kGapNoticeType; their attributes are documented below.
//
// Thread safety: Poll/Next/Cancel may be called from one reader thread at a
// time; SetWakeup may be called any time. Wakeup callbacks run on publishing
// threads or on the FanOut's delivery thread (streams with many subscribers,
// core/fanout.h) and must be cheap and must not call back into the
// subscription.
#ifndef KEEL_CORE_SUBSCRIPTION_H_
#define KEEL_CORE_SUBSCRIPTION_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "keel/core/cursor.h"
#include "keel/core/event.h"
#include "keel/core/replayer.h"

namespace keel {

// Events are shared between every subscriber of a stream; never mutated.
using EventPtr = std::shared_ptr<const Event>;

enum class OverflowPolicy { kCatchUp, kDropOldest, kDisconnect };

// Notice types and their attribute keys.
inline constexpr char kDroppedNoticeType[] = "bus.dropped";
inline constexpr char kGapNoticeType[] = "bus.gap";
inline constexpr char kNoticeFirst[] = "first";    // First missing sequence.
inline constexpr char kNoticeLast[] = "last";      // Last missing sequence.
inline constexpr char kNoticeCount[] = "count";    // Events missing.
inline constexpr char kNoticeRanges[] = "ranges";  // "a-b,c-d": exact dropped ranges.

struct SubscribeOptions {
  std::string stream;
  Position after = Position::Latest();  // Earliest/cursor => replay, then live.
  EventFilter filter;
  size_t queue_capacity = 1024;  // Events held for this reader, >= 1.
  OverflowPolicy overflow = OverflowPolicy::kCatchUp;
  absl::Duration notice_window = absl::Seconds(1);  // kDropOldest notices.
  size_t catch_up_page = 512;  // Events read from the Replayer per page.
};

class Subscription {
 public:
  virtual ~Subscription() = default;

  // Returns up to `max` events without blocking (possibly none). After the
  // bus closes, remaining events are returned first, then kClosed.
  virtual absl::StatusOr<std::vector<EventPtr>> Poll(size_t max) = 0;

  // Like Poll but waits up to `timeout` for at least one event.
  virtual absl::StatusOr<std::vector<EventPtr>> Next(size_t max, absl::Duration timeout) = 0;

  // `wakeup` is called when Poll would return something new (events, a
  // notice or a final status): for new events, once until the next Poll
  // (edge-triggered, so a reader that was told and has not polled yet costs
  // publishers nothing); so does a final status (a reader that was told
  // and has not polled yet sees it in its next Poll). Replaces any
  // earlier callback; a callback that was already running may still finish
  // after SetWakeup returns.
  virtual void SetWakeup(std::function<void()> wakeup) = 0;

  // Ends the subscription; later Poll calls return kClosed.
  virtual void Cancel() = 0;

  // Cursor at the last sequence handed to the reader (or skipped by its filter).
  virtual Cursor position() const = 0;

  // Pages read from the Replayer so far (follow start and overflow catch-up
  // beyond the stream's recent tail).
  virtual uint64_t catch_up_reads() const = 0;
};

}  // namespace keel

#endif  // KEEL_CORE_SUBSCRIPTION_H_
