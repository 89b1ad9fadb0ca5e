#include "keel/cmd/keel/server/sse_broadcast.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/api_helpers.h"
#include "keel/cmd/keel/server/sse_frames.h"
#include "keel/core/errors.h"

namespace keel::server {

void LogSseFailure(Logger& logger, absl::string_view stream, const absl::Status& status) {
  if (GetErrorKind(status) == ErrorKind::kClosed) return;
  logger.Warn(absl::StrCat("sse stream=", stream, " ended with an error: ", status.ToString()));
}
namespace {

namespace net = boost::asio;

// Events taken from the subscription per poll.
constexpr size_t kPullEvents = 1024;

// A catch-up reads the store through the driver, which may throw (see Api).
absl::StatusOr<std::vector<EventPtr>> PollCatching(Subscription& subscription, size_t max) {
  try {
    return subscription.Poll(max);
  } catch (const std::exception& e) {
    return ExceptionStatus(e);
  }
}

}  // namespace

SsePoll PollCountingReads(Subscription& subscription, size_t max, Metrics& metrics) {
  const uint64_t reads_before = subscription.catch_up_reads();
  SsePoll poll{PollCatching(subscription, max)};
  const uint64_t reads = subscription.catch_up_reads() - reads_before;
  metrics.CountCatchUpReads(reads);
  poll.read_store = reads > 0;
  return poll;
}

SseBroadcast::SseBroadcast(std::string stream, std::unique_ptr<Subscription> subscription,
                           uint64_t after, net::io_context& context,
                           std::shared_ptr<ServerState> state, SseBroadcasts& owner)
    : stream_(std::move(stream)),
      subscription_(std::move(subscription)),
      context_(context),
      state_(std::move(state)),
      epoch_(EpochOf(state_->api.bus())),
      owner_(owner),
      head_(after),
      flush_timer_(context) {}

void SseBroadcast::Start() {
  std::weak_ptr<SseBroadcast> weak = weak_from_this();
  wake_pending_.store(true);  // Pull below polls; wakeups until then need no post.
  subscription_->SetWakeup([weak] {
    if (auto self = weak.lock()) self->OnWakeup();
  });
  Pull();
}

bool SseBroadcast::Join(const std::shared_ptr<SseMember>& member) {
  if (retired_ || ended_) return false;
  const uint64_t position = member->position();
  if (position < base()) return false;
  slots_[member.get()] = members_.size();
  members_.push_back(member);
  if (position < head_) ScheduleFlush();
  return true;
}

void SseBroadcast::Leave(SseMember* member) {
  DropMember(member);
  if (members_.empty()) Retire();
}

void SseBroadcast::Written(SseMember* member) {
  if (member->position() < head_ || ended_) ScheduleFlush();
}

void SseBroadcast::OnWakeup() {
  if (wake_pending_.exchange(true)) return;
  net::post(context_, [self = shared_from_this()] { self->Pull(); });
}

// Polls on this thread while the subscription is live; a poll that read the
// store sends the next ones to the blocking pool until it is live again.
void SseBroadcast::Pull() {
  if (pulling_ || retired_ || ended_) return;
  wake_pending_.store(false);
  auto poll = [this] {
    return PollCountingReads(*subscription_, kPullEvents, state_->api.metrics());
  };
  if (!catching_up_) return Take(poll());
  pulling_ = true;
  net::post(state_->blocking, [self = shared_from_this(), poll] {
    SsePoll polled = poll();
    net::post(self->context_, [self, polled = std::move(polled)]() mutable {
      self->pulling_ = false;
      if (self->retired_) return self->subscription_.reset();  // Deferred by Retire().
      self->Take(std::move(polled));
      // A wakeup that came while the pool polled found pulling_ set.
      if (self->wake_pending_.load()) self->Pull();
    });
  });
}

void SseBroadcast::Take(SsePoll polled) {
  catching_up_ = polled.read_store;
  absl::StatusOr<std::vector<EventPtr>>& events = polled.events;
  if (!events.ok()) {
    // Stays registered (which keeps it alive) until its members have had
    // everything; Join refuses newcomers meanwhile.
    ended_ = events.status();
    LogSseFailure(*state_->logger, stream_, *ended_);  // Once, not once per member.
    return ScheduleFlush();
  }
  for (EventPtr& event : *events) {
    // A notice (sequence 0) or a hole: the members' own subscriptions
    // report it exactly.
    if (event->sequence != head_ + 1) return DetachAll();
    window_.push_back(std::move(event));
    ++head_;
  }
  if (window_.size() > 2 * state_->options.sse_window) Trim();
  if (!events->empty()) ScheduleFlush();
  // A subscription that fell behind its queue says nothing more until it is
  // polled again, so poll until a poll comes back empty (an empty page
  // that did not finish catching up wakes this broadcast itself).
  if (!events->empty()) {
    net::post(context_, [self = shared_from_this()] { self->Pull(); });
  }
}

// A round starts at most once per `sse_flush` interval; once the stream
// ended, members are served as soon as their writes complete.
void SseBroadcast::ScheduleFlush() {
  if (retired_) return;
  if (cursor_ > 0) {
    again_ = true;  // The running round may have passed the member already.
    return;
  }
  if (flush_scheduled_) return;
  flush_scheduled_ = true;
  if (ended_ || Clock::now() >= next_flush_) {
    net::post(context_, [self = shared_from_this()] { self->Flush(); });
    return;
  }
  flush_timer_.expires_at(next_flush_);
  flush_timer_.async_wait(
      [self = shared_from_this()](boost::system::error_code) { self->Flush(); });
}

void SseBroadcast::Flush() {
  flush_scheduled_ = false;
  if (retired_) return;
  if (cursor_ == 0) {
    next_flush_ = Clock::now() + absl::ToChronoNanoseconds(state_->options.sse_flush);
    again_ = false;
  }
  std::vector<SseMember*> behind;
  std::vector<SseMember*> done;
  const size_t end = std::min(members_.size(), cursor_ + kChunkMembers);
  for (; cursor_ < end; ++cursor_) Visit(members_[cursor_], behind, done);
  // Members leave after the loop: Detach and End do not call back here.
  for (SseMember* raw : behind) {
    std::shared_ptr<SseMember> member = members_[slots_[raw]];
    DropMember(raw);
    member->Detach();
  }
  for (SseMember* raw : done) {
    std::shared_ptr<SseMember> member = members_[slots_[raw]];
    DropMember(raw);
    member->End(*ended_);
  }
  if (cursor_ < members_.size()) {
    flush_scheduled_ = true;
    net::post(context_, [self = shared_from_this()] { self->Flush(); });
    return;
  }
  cursor_ = 0;
  built_.clear();
  Trim();
  if (members_.empty()) return Retire();
  if (again_) ScheduleFlush();
}

void SseBroadcast::Visit(const std::shared_ptr<SseMember>& member, std::vector<SseMember*>& behind,
                         std::vector<SseMember*>& done) {
  if (member->writing()) return;  // Written() asks again.
  const uint64_t position = member->position();
  if (position < base()) {
    behind.push_back(member.get());
  } else if (position < head_) {
    Serve(*member);
    // Written() only follows an asynchronous write: a batch the socket took
    // whole needs another round when more follows it, or the stream ended.
    if (member->position() < head_ || ended_) again_ = true;
  } else if (ended_) {
    done.push_back(member.get());
  }
}

// Members at one position share one buffer.
void SseBroadcast::Serve(SseMember& member) {
  if (built_head_ != head_) {
    built_.clear();
    built_head_ = head_;
  }
  const uint64_t after = member.position();
  const uint64_t last = std::min<uint64_t>(head_, after + state_->options.sse_batch);
  std::shared_ptr<const std::string>& frames = built_[after];
  if (frames == nullptr) frames = Frames(after, last);
  member.WriteShared(frames, last, last - after);
}

std::shared_ptr<const std::string> SseBroadcast::Frames(uint64_t after, uint64_t last) {
  SseFrameCache& cache = ThreadSseFrameCache();
  auto frames = std::make_shared<std::string>();
  const auto first = window_.begin() + static_cast<std::ptrdiff_t>(after - base());
  const auto end = first + static_cast<std::ptrdiff_t>(last - after);
  frames->reserve(static_cast<size_t>(end - first) * 256);
  for (auto it = first; it != end; ++it) cache.Append(state_->id, **it, epoch_, *frames);
  return frames;
}

// Keeps the events some member still needs, and the last `sse_batch` so
// that a session just behind the others can still join, but never more than
// `sse_window`: a member further behind is detached at the next flush.
void SseBroadcast::Trim() {
  auto before_head = [this](uint64_t count) { return head_ > count ? head_ - count : 0; };
  uint64_t needed_after = before_head(state_->options.sse_batch);
  for (const auto& member : members_) needed_after = std::min(needed_after, member->position());
  const uint64_t drop_through = std::max(needed_after, before_head(state_->options.sse_window));
  while (!window_.empty() && base() < drop_through) window_.pop_front();
}

void SseBroadcast::DetachAll() {
  std::vector<std::shared_ptr<SseMember>> members;
  members.swap(members_);
  slots_.clear();
  Retire();
  for (auto& member : members) member->Detach();
}

void SseBroadcast::Retire() {
  if (retired_) return;
  retired_ = true;
  owner_.Remove(stream_, this);
  flush_timer_.cancel();
  window_.clear();
  built_.clear();
  head_ = 0;
  if (!pulling_) subscription_.reset();  // One reader at a time: a poll on the pool resets it.
}

// Swaps the last member into the slot; a round that already passed that
// slot runs again so the moved member is not skipped.
void SseBroadcast::DropMember(SseMember* member) {
  auto it = slots_.find(member);
  if (it == slots_.end()) return;
  const size_t slot = it->second;
  slots_.erase(it);
  if (slot + 1 != members_.size()) {
    members_[slot] = std::move(members_.back());
    slots_[members_[slot].get()] = slot;
    if (slot < cursor_ && members_.size() - 1 >= cursor_) again_ = true;
  }
  members_.pop_back();
}

std::shared_ptr<SseBroadcast> SseBroadcasts::Find(const std::string& stream) const {
  auto it = by_stream_.find(stream);
  return it == by_stream_.end() ? nullptr : it->second;
}

void SseBroadcasts::Add(const std::string& stream, std::shared_ptr<SseBroadcast> broadcast) {
  by_stream_[stream] = std::move(broadcast);
}

void SseBroadcasts::Remove(const std::string& stream, const SseBroadcast* broadcast) {
  auto it = by_stream_.find(stream);
  if (it != by_stream_.end() && it->second.get() == broadcast) by_stream_.erase(it);
}

}  // namespace keel::server
