#include "keel/cmd/keel/server/push/stream_watch.h"

#include <set>

namespace keel::push {
namespace {

// Only a wake-up is wanted from each stream: a small queue that drops its
// oldest events costs publishers the least.
constexpr size_t kQueueCapacity = 4;
constexpr size_t kDrainBatch = 64;

}  // namespace

void Doorbell::Ring() {
  MutexLock lock(&mu_);
  rung_ = true;
  rung_cv_.Signal();
}

void Doorbell::Wait(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  MutexLock lock(&mu_);
  while (!rung_ && absl::Now() < deadline) rung_cv_.WaitWithDeadline(&mu_, deadline);
  rung_ = false;
}

StreamWatch::StreamWatch(EventBus& bus, std::shared_ptr<Doorbell> bell)
    : bus_(bus), bell_(std::move(bell)) {}

StreamWatch::~StreamWatch() {
  for (auto& [stream, subscription] : followed_) subscription->Cancel();
}

void StreamWatch::Follow(const std::vector<std::string>& streams) {
  const std::set<std::string> wanted(streams.begin(), streams.end());
  for (auto it = followed_.begin(); it != followed_.end();) {
    if (wanted.count(it->first) == 0) {
      it->second->Cancel();
      it = followed_.erase(it);
    } else {
      ++it;
    }
  }
  for (const std::string& stream : streams) {
    if (followed_.size() >= kMaxWatchedStreams) return;
    if (followed_.count(stream) > 0) continue;
    SubscribeOptions options;
    options.stream = stream;
    options.queue_capacity = kQueueCapacity;
    options.overflow = OverflowPolicy::kDropOldest;
    absl::StatusOr<std::unique_ptr<Subscription>> subscription = bus_.Subscribe(options);
    if (!subscription.ok()) continue;
    (*subscription)->SetWakeup([bell = bell_] { bell->Ring(); });
    followed_.emplace(stream, *std::move(subscription));
  }
}

void StreamWatch::Rearm() {
  for (auto& [stream, subscription] : followed_) subscription->Poll(kDrainBatch).IgnoreError();
}

}  // namespace keel::push
