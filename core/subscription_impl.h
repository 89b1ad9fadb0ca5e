// Internal: the state behind one Subscription (see core/subscription.h for
// the contract and core/fanout.h for who drives it).
//
// Two modes. kLive: the publisher side (Offer) appends to a bounded queue.
// kCatchUp: Offer queues nothing; the reader, once its queue is empty, reads
// pages after `last_` from the stream's tail (core/fanout_tail.h) when it
// still holds them, else from the Replayer. The reader returns to kLive only when
// a page reached the head and no event newer than `last_` was offered in the
// meantime, so nothing published during the switch can fall between replay
// and live. Live events are checked for continuity (sequence == last_ + 1); a
// hole sends the subscription back to kCatchUp.
//
// Thread safety: Offer/Close from publishing threads, Poll/Next/Cancel from
// the reader; one mutex guards the state.
#ifndef KEEL_CORE_SUBSCRIPTION_IMPL_H_
#define KEEL_CORE_SUBSCRIPTION_IMPL_H_

#include <deque>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "keel/core/mutex.h"
#include "absl/types/span.h"
#include "keel/core/clock.h"
#include "keel/core/subscription.h"

namespace keel {

class FanOutHub;
class FanOutTail;

class SubscriptionState {
 public:
  // With `can_replay` the subscription starts in kCatchUp and waits for
  // Anchor(); without it (history-less driver) it starts live at whatever
  // sequence arrives first.
  SubscriptionState(SubscribeOptions options, std::weak_ptr<FanOutHub> hub, uint64_t epoch,
                    Clock* clock, bool can_replay);

  const std::string& stream() const { return options_.stream; }

  // The stream's recent events, read before the Replayer when catching up.
  void SetTail(std::shared_ptr<const FanOutTail> tail);

  // Publisher side.
  void Offer(absl::Span<const EventPtr> events);
  void Close();  // Bus closing: drain then kClosed.

  // Sets the sequence to read after, once known; until then live events are
  // only noted.
  void Anchor(uint64_t start_after);

  // Reader side.
  absl::StatusOr<std::vector<EventPtr>> Poll(size_t max);
  absl::StatusOr<std::vector<EventPtr>> Next(size_t max, absl::Duration timeout);
  void SetWakeup(std::function<void()> wakeup);
  void Cancel();
  Cursor position() const;
  uint64_t catch_up_reads() const;

 private:
  enum class Mode { kLive, kCatchUp };

  void OfferOne(const EventPtr& event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DropOldest() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::optional<EventPtr> TakeNotice(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool Readable(absl::Time now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads one page from the tail or else from the Replayer (lock released
  // during a Replayer read).
  absl::StatusOr<std::vector<EventPtr>> CatchUp(size_t max) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::optional<std::vector<EventPtr>> CatchUpFromTail(size_t max)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Wake() ABSL_LOCKS_EXCLUDED(mu_);

  const SubscribeOptions options_;
  const std::weak_ptr<FanOutHub> hub_;
  const uint64_t epoch_;
  Clock* const clock_;
  const bool can_replay_;

  mutable Mutex mu_;
  CondVar changed_;
  Mode mode_ ABSL_GUARDED_BY(mu_) = Mode::kCatchUp;
  bool anchored_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t last_ ABSL_GUARDED_BY(mu_) = 0;         // Last sequence taken in (queued/skipped).
  uint64_t max_offered_ ABSL_GUARDED_BY(mu_) = 0;  // Highest sequence ever offered.
  uint64_t position_ ABSL_GUARDED_BY(mu_) = 0;     // Reader's position.
  std::deque<EventPtr> queue_ ABSL_GUARDED_BY(mu_);
  std::vector<std::pair<uint64_t, uint64_t>> dropped_ ABSL_GUARDED_BY(mu_);
  absl::Time last_notice_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool reading_ ABSL_GUARDED_BY(mu_) = false;  // A catch-up read is in flight.
  uint64_t catch_up_reads_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<std::function<void()>> wakeup_ ABSL_GUARDED_BY(mu_);
  // An offer may call wakeup_: set by Poll and SetWakeup, cleared by the
  // offer that calls it.
  bool wake_armed_ ABSL_GUARDED_BY(mu_) = true;
  std::shared_ptr<const FanOutTail> tail_ ABSL_GUARDED_BY(mu_);
};

}  // namespace keel

#endif  // KEEL_CORE_SUBSCRIPTION_IMPL_H_
