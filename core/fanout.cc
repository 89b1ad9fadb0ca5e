#include "keel/core/fanout.h"

#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"
#include "keel/core/fanout_dispatcher.h"
#include "keel/core/fanout_hub.h"
#include "keel/core/publish_validation.h"
#include "keel/core/status_macros.h"

namespace keel {
namespace {

class SubscriptionHandle : public Subscription {
 public:
  SubscriptionHandle(std::shared_ptr<SubscriptionState> state, std::weak_ptr<FanOutHub> hub)
      : state_(std::move(state)), hub_(std::move(hub)) {}
  ~SubscriptionHandle() override { Cancel(); }

  absl::StatusOr<std::vector<EventPtr>> Poll(size_t max) override { return state_->Poll(max); }
  absl::StatusOr<std::vector<EventPtr>> Next(size_t max, absl::Duration timeout) override {
    return state_->Next(max, timeout);
  }
  void SetWakeup(std::function<void()> wakeup) override { state_->SetWakeup(std::move(wakeup)); }
  void Cancel() override {
    state_->Cancel();
    if (std::shared_ptr<FanOutHub> hub = hub_.lock()) hub->Remove(state_.get());
  }
  Cursor position() const override { return state_->position(); }
  uint64_t catch_up_reads() const override { return state_->catch_up_reads(); }

 private:
  const std::shared_ptr<SubscriptionState> state_;
  const std::weak_ptr<FanOutHub> hub_;
};

absl::Status ValidateOptions(const SubscribeOptions& options, bool can_replay) {
  KEEL_RETURN_IF_ERROR(ValidateStreamName(options.stream));
  if (options.queue_capacity == 0) return InvalidArgument("queue_capacity must be at least 1");
  if (options.catch_up_page == 0) return InvalidArgument("catch_up_page must be at least 1");
  if (!can_replay && options.after.kind != Position::Kind::kLatest) {
    return InvalidArgument("this driver keeps no history: subscriptions start at 'latest'");
  }
  return absl::OkStatus();
}

}  // namespace

// ---- FanOutHub ----

absl::StatusOr<ReplayPage> FanOutHub::Replay(const ReplayRequest& request) {
  ReaderMutexLock lock(&replay_mu_);
  if (replayer_ == nullptr) return Closed("the bus closed");
  return replayer_->Replay(request);
}

absl::StatusOr<StreamInfo> FanOutHub::Bounds(absl::string_view stream) {
  ReaderMutexLock lock(&replay_mu_);
  if (replayer_ == nullptr) return Closed("the bus closed");
  return replayer_->Bounds(stream);
}

absl::Status FanOutHub::Add(const std::shared_ptr<SubscriptionState>& state) {
  MutexLock lock(&subs_mu_);
  if (closed_) return Closed("the bus is closed");
  StreamSubscribers& subscribers = subs_[state->stream()];
  if (subscribers.tail == nullptr) subscribers.tail = std::make_shared<FanOutTail>(tail_events_);
  state->SetTail(subscribers.tail);
  subscribers.index[state.get()] = subscribers.states.size();
  subscribers.states.push_back(state);
  return absl::OkStatus();
}

void FanOutHub::Remove(const SubscriptionState* state) {
  MutexLock lock(&subs_mu_);
  auto it = subs_.find(state->stream());
  if (it == subs_.end()) return;
  StreamSubscribers& subscribers = it->second;
  auto found = subscribers.index.find(state);
  if (found == subscribers.index.end()) return;
  const size_t slot = found->second;
  subscribers.index.erase(found);
  if (slot + 1 != subscribers.states.size()) {
    subscribers.states[slot] = std::move(subscribers.states.back());
    subscribers.index[subscribers.states[slot].get()] = slot;
  }
  subscribers.states.pop_back();
  if (subscribers.states.empty()) subs_.erase(it);
}

void FanOutHub::Offer(const StreamSubscribers& subscribers, absl::Span<const EventPtr> events) {
  subscribers.tail->Append(events);
  for (const auto& state : subscribers.states) state->Offer(events);
}

void FanOutHub::Deliver(absl::string_view stream, absl::Span<const EventPtr> events) {
  ReaderMutexLock lock(&subs_mu_);
  auto it = subs_.find(stream);
  if (it == subs_.end()) return;
  Offer(it->second, events);
}

bool FanOutHub::DeliverIfAtMost(absl::string_view stream, absl::Span<const EventPtr> events,
                                size_t max_subscribers) {
  ReaderMutexLock lock(&subs_mu_);
  auto it = subs_.find(stream);
  if (it == subs_.end()) return true;
  if (it->second.states.size() > max_subscribers) return false;
  Offer(it->second, events);
  return true;
}

bool FanOutHub::HasSubscribers(absl::string_view stream) const {
  ReaderMutexLock lock(&subs_mu_);
  return subs_.contains(stream);
}

void FanOutHub::CloseAll() {
  absl::flat_hash_map<std::string, StreamSubscribers> subs;
  {
    MutexLock lock(&subs_mu_);
    closed_ = true;
    subs.swap(subs_);
  }
  for (auto& [stream, subscribers] : subs) {
    for (auto& state : subscribers.states) state->Close();
  }
}

void FanOutHub::Detach() {
  MutexLock lock(&replay_mu_);
  replayer_ = nullptr;
}

// ---- FanOut ----

FanOut::FanOut(Replayer* replayer, Clock* clock, FanOutOptions options)
    : options_(options),
      hub_(std::make_shared<FanOutHub>(replayer, clock, options.tail_events)),
      dispatcher_(std::make_unique<FanOutDispatcher>(hub_, options.max_backlog)) {}

FanOut::~FanOut() {
  CloseAll();
  Detach();
}

absl::StatusOr<std::unique_ptr<Subscription>> FanOut::Subscribe(const SubscribeOptions& options) {
  const bool can_replay = hub_->can_replay();
  KEEL_RETURN_IF_ERROR(ValidateOptions(options, can_replay));
  SubscribeOptions effective = options;
  if (!can_replay && effective.overflow == OverflowPolicy::kCatchUp) {
    effective.overflow = OverflowPolicy::kDropOldest;
  }
  auto state = std::make_shared<SubscriptionState>(effective, hub_, hub_->epoch(), hub_->clock(),
                                                   can_replay);
  KEEL_RETURN_IF_ERROR(hub_->Add(state));
  auto handle = std::make_unique<SubscriptionHandle>(state, hub_);
  if (!can_replay) return handle;

  // Registered first, anchored second: events published in between are
  // either at or below the anchor (skipped) or above it (read or queued).
  absl::StatusOr<StreamInfo> info = hub_->Bounds(options.stream);
  if (!info.ok()) return info.status();
  absl::StatusOr<uint64_t> start = ResolvePosition(options.after, *info, hub_->epoch());
  if (!start.ok() && GetErrorKind(start.status()) == ErrorKind::kRetentionGap) {
    start = options.after.cursor.sequence;  // Catch-up reports the gap, then goes on.
  }
  if (!start.ok()) return start.status();
  state->Anchor(*start);
  return handle;
}

// Inline only while nothing of the stream waits for the delivery thread, so
// that the stream stays in order.
void FanOut::Deliver(absl::string_view stream, absl::Span<const EventPtr> events) {
  if (!dispatcher_->Busy(stream) &&
      hub_->DeliverIfAtMost(stream, events, options_.inline_subscribers)) {
    return;
  }
  dispatcher_->Enqueue(stream, events);
}

void FanOut::Deliver(absl::string_view stream, absl::Span<const Event> events) {
  if (!hub_->HasSubscribers(stream) && !dispatcher_->Busy(stream)) return;
  std::vector<EventPtr> shared;
  shared.reserve(events.size());
  for (const Event& event : events) shared.push_back(std::make_shared<Event>(event));
  Deliver(stream, absl::MakeConstSpan(shared));
}

bool FanOut::HasSubscribers(absl::string_view stream) const {
  return hub_->HasSubscribers(stream);
}

// Close drains: what the delivery thread still holds reaches the queues
// before the subscriptions close.
void FanOut::CloseAll() {
  dispatcher_->Flush();
  hub_->CloseAll();
}

void FanOut::Detach() {
  dispatcher_->Stop();
  hub_->Detach();
}

}  // namespace keel
