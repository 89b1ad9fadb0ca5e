#include "keel/core/subscription_impl.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "keel/core/errors.h"
#include "keel/core/fanout_hub.h"
#include "keel/core/fanout_tail.h"

namespace keel {
namespace {

// Longest a blocked Next() sleeps while a rate-limited notice is pending.
constexpr absl::Duration kNoticePollInterval = absl::Milliseconds(10);

EventPtr MakeNotice(const std::string& stream, const char* type, absl::Time now, uint64_t first,
                    uint64_t last, uint64_t count, std::string ranges) {
  auto notice = std::make_shared<Event>();
  notice->stream = stream;
  notice->type = type;
  notice->time = now;
  notice->attributes[kNoticeFirst] = absl::StrCat(first);
  notice->attributes[kNoticeLast] = absl::StrCat(last);
  notice->attributes[kNoticeCount] = absl::StrCat(count);
  notice->attributes[kNoticeRanges] = std::move(ranges);
  return notice;
}

}  // namespace

SubscriptionState::SubscriptionState(SubscribeOptions options, std::weak_ptr<FanOutHub> hub,
                                     uint64_t epoch, Clock* clock, bool can_replay)
    : options_(std::move(options)),
      hub_(std::move(hub)),
      epoch_(epoch),
      clock_(clock),
      can_replay_(can_replay) {
  if (!can_replay_) mode_ = Mode::kLive;
}

// The wakeup is taken under the same lock as the offer (with thousands of
// subscribers per stream, locking each one a second time was a visible part
// of every delivery), and only once between two polls: a reader that was
// told and has not polled yet needs no second call.
void SubscriptionState::Offer(absl::Span<const EventPtr> events) {
  std::shared_ptr<std::function<void()>> wakeup;
  {
    MutexLock lock(&mu_);
    if (closed_ || cancelled_ || !failure_.ok()) return;
    const size_t queued_before = queue_.size();
    const uint64_t last_before = last_;
    const Mode mode_before = mode_;
    for (const EventPtr& event : events) OfferOne(event);
    bool progressed = queue_.size() != queued_before || last_ != last_before ||
                      !failure_.ok() || mode_ != mode_before;
    if (!progressed) return;
    changed_.SignalAll();
    if (wake_armed_) {
      wakeup = wakeup_;
      wake_armed_ = false;
    }
  }
  if (wakeup) (*wakeup)();
}

void SubscriptionState::OfferOne(const EventPtr& event) {
  const uint64_t sequence = event->sequence;
  max_offered_ = std::max(max_offered_, sequence);
  if (!anchored_) {
    if (mode_ == Mode::kCatchUp) return;  // Anchor() will say where to start.
    anchored_ = true;                     // History-less: start at the first arrival.
    last_ = position_ = sequence - 1;
  }
  if (sequence <= last_ || mode_ == Mode::kCatchUp) return;
  if (sequence != last_ + 1 && can_replay_) {
    mode_ = Mode::kCatchUp;  // A hole: read it from the Replayer.
    return;
  }
  if (!options_.filter.Matches(*event)) {
    last_ = sequence;
    if (queue_.empty()) position_ = sequence;
    return;
  }
  if (queue_.size() >= options_.queue_capacity) {
    switch (options_.overflow) {
      case OverflowPolicy::kCatchUp:
        mode_ = Mode::kCatchUp;
        return;
      case OverflowPolicy::kDropOldest:
        DropOldest();
        break;
      case OverflowPolicy::kDisconnect:
        queue_.clear();
        failure_ = MakeError(ErrorKind::kSlowConsumer,
                             absl::StrCat("subscriber of '", options_.stream, "' fell more than ",
                                          options_.queue_capacity, " events behind"));
        return;
    }
  }
  queue_.push_back(event);
  last_ = sequence;
}

void SubscriptionState::DropOldest() {
  uint64_t sequence = queue_.front()->sequence;
  queue_.pop_front();
  if (!dropped_.empty() && dropped_.back().second + 1 == sequence) {
    dropped_.back().second = sequence;
  } else {
    dropped_.emplace_back(sequence, sequence);
  }
}

std::optional<EventPtr> SubscriptionState::TakeNotice(absl::Time now) {
  if (dropped_.empty() || now < last_notice_ + options_.notice_window) return std::nullopt;
  uint64_t count = 0;
  std::vector<std::string> ranges;
  for (const auto& [first, last] : dropped_) {
    count += last - first + 1;
    ranges.push_back(absl::StrCat(first, "-", last));
  }
  EventPtr notice = MakeNotice(options_.stream, kDroppedNoticeType, now, dropped_.front().first,
                               dropped_.back().second, count, absl::StrJoin(ranges, ","));
  dropped_.clear();
  last_notice_ = now;
  return notice;
}

bool SubscriptionState::Readable(absl::Time now) const {
  if (cancelled_ || closed_ || !failure_.ok() || !queue_.empty()) return true;
  if (mode_ == Mode::kCatchUp && anchored_ && !reading_) return true;
  return !dropped_.empty() && now >= last_notice_ + options_.notice_window;
}

absl::StatusOr<std::vector<EventPtr>> SubscriptionState::Poll(size_t max) {
  if (max == 0) return InvalidArgument("Poll needs max >= 1");
  bool again = false;
  absl::StatusOr<std::vector<EventPtr>> result;
  {
    MutexLock lock(&mu_);
    wake_armed_ = true;  // What is offered after this poll is news again.
    if (cancelled_) return Closed("subscription cancelled");
    if (!failure_.ok()) return failure_;
    std::vector<EventPtr> events;
    if (std::optional<EventPtr> notice = TakeNotice(clock_->Now())) events.push_back(*notice);
    while (events.size() < max && !queue_.empty()) {
      position_ = queue_.front()->sequence;
      events.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    if (queue_.empty()) position_ = std::max(position_, last_);
    if (!events.empty()) return events;
    if (closed_) return Closed(absl::StrCat("the bus serving '", options_.stream, "' closed"));
    if (mode_ != Mode::kCatchUp || !anchored_) return events;
    result = CatchUp(max);
    // An empty page that did not finish catching up: ask the reader back.
    again = result.ok() && result->empty() && mode_ == Mode::kCatchUp;
  }
  if (again) Wake();
  return result;
}

void SubscriptionState::SetTail(std::shared_ptr<const FanOutTail> tail) {
  MutexLock lock(&mu_);
  tail_ = std::move(tail);
}

// The tail is filled before its events are offered, so its end is a seam as
// safe as the Replayer's: whatever is newer will still be offered.
std::optional<std::vector<EventPtr>> SubscriptionState::CatchUpFromTail(size_t max) {
  if (tail_ == nullptr) return std::nullopt;
  std::optional<FanOutTail::Page> page = tail_->Read(last_, max, options_.filter);
  if (!page) return std::nullopt;
  last_ = position_ = std::max(last_, page->last_scanned);
  if (page->reached_end && max_offered_ <= last_) mode_ = Mode::kLive;
  return std::move(page->events);
}

absl::StatusOr<std::vector<EventPtr>> SubscriptionState::CatchUp(size_t max) {
  if (reading_) return std::vector<EventPtr>{};
  if (std::optional<std::vector<EventPtr>> events = CatchUpFromTail(max)) return *std::move(events);
  const uint64_t after = last_;
  ReplayRequest request;
  request.stream = options_.stream;
  request.after = Position::After(Cursor::For(options_.stream, epoch_, after));
  request.limit = std::min({max, options_.catch_up_page, kMaxReplayLimit});
  request.filter = options_.filter;

  reading_ = true;
  ++catch_up_reads_;
  mu_.Unlock();
  std::shared_ptr<FanOutHub> hub = hub_.lock();
  absl::StatusOr<ReplayPage> page =
      hub ? hub->Replay(request) : Closed("the bus was destroyed");
  mu_.Lock();
  reading_ = false;

  if (cancelled_) return Closed("subscription cancelled");
  if (!page.ok()) {
    std::optional<RetentionGap> gap = GetRetentionGap(page.status());
    if (!gap) return page.status();
    last_ = position_ = gap->oldest - 1;
    return std::vector<EventPtr>{MakeNotice(options_.stream, kGapNoticeType, clock_->Now(),
                                            after + 1, gap->oldest - 1, gap->missed(),
                                            absl::StrCat(after + 1, "-", gap->oldest - 1))};
  }
  std::vector<EventPtr> events;
  events.reserve(page->events.size());
  for (Event& event : page->events) events.push_back(std::make_shared<Event>(std::move(event)));
  last_ = position_ = std::max(last_, page->next.sequence);
  if (page->reached_end && max_offered_ <= last_) mode_ = Mode::kLive;
  return events;
}

absl::StatusOr<std::vector<EventPtr>> SubscriptionState::Next(size_t max, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    absl::StatusOr<std::vector<EventPtr>> events = Poll(max);
    if (!events.ok() || !events->empty()) return events;
    MutexLock lock(&mu_);
    while (!Readable(clock_->Now())) {
      absl::Time wake_at = dropped_.empty() ? deadline
                                            : std::min(deadline, absl::Now() + kNoticePollInterval);
      if (changed_.WaitWithDeadline(&mu_, wake_at) && absl::Now() >= deadline) {
        return std::vector<EventPtr>{};
      }
    }
  }
}

void SubscriptionState::Anchor(uint64_t start_after) {
  {
    MutexLock lock(&mu_);
    anchored_ = true;
    last_ = position_ = start_after;
    changed_.SignalAll();
  }
  Wake();
}

void SubscriptionState::Close() {
  {
    MutexLock lock(&mu_);
    closed_ = true;
    changed_.SignalAll();
  }
  Wake();
}

void SubscriptionState::Cancel() {
  MutexLock lock(&mu_);
  cancelled_ = true;
  queue_.clear();
  wakeup_.reset();
  changed_.SignalAll();
}

void SubscriptionState::SetWakeup(std::function<void()> wakeup) {
  bool readable = false;
  {
    MutexLock lock(&mu_);
    wakeup_ = wakeup ? std::make_shared<std::function<void()>>(std::move(wakeup)) : nullptr;
    wake_armed_ = true;
    // Something may already be waiting (e.g. a follow's first page): say so
    // now, since no further Offer may come to announce it.
    readable = wakeup_ != nullptr && Readable(clock_->Now());
  }
  if (readable) Wake();
}

void SubscriptionState::Wake() {
  std::shared_ptr<std::function<void()>> wakeup;
  {
    MutexLock lock(&mu_);
    wakeup = wakeup_;
  }
  if (wakeup) (*wakeup)();
}

uint64_t SubscriptionState::catch_up_reads() const {
  MutexLock lock(&mu_);
  return catch_up_reads_;
}

Cursor SubscriptionState::position() const {
  MutexLock lock(&mu_);
  return Cursor::For(options_.stream, epoch_, position_);
}

}  // namespace keel
