#include "keel/core/fanout_dispatcher.h"

#include <utility>

#include "keel/core/fanout_hub.h"

namespace keel {

FanOutDispatcher::FanOutDispatcher(std::shared_ptr<FanOutHub> hub, size_t max_backlog)
    : hub_(std::move(hub)), max_backlog_(max_backlog) {}

FanOutDispatcher::~FanOutDispatcher() { Stop(); }

bool FanOutDispatcher::Busy(absl::string_view stream) const {
  MutexLock lock(&mu_);
  return pending_.contains(stream);
}

void FanOutDispatcher::Enqueue(absl::string_view stream, absl::Span<const EventPtr> events) {
  if (events.empty()) return;
  MutexLock lock(&mu_);
  // Waiting for room keeps the pointers held here bounded; the delivery
  // thread never waits for a publisher, so it always makes room.
  while (backlog_ >= max_backlog_ && !stopped_) changed_.Wait(&mu_);
  if (stopped_) return;  // The bus closed: nobody is left to offer to.
  auto [it, inserted] = pending_.try_emplace(stream);
  // A stream being offered is not ready again until its round ends; the
  // round then sees these events and re-queues the stream.
  if (inserted) ready_.emplace_back(stream);
  it->second.insert(it->second.end(), events.begin(), events.end());
  backlog_ += events.size();
  if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
  work_.Signal();
}

void FanOutDispatcher::Flush() {
  MutexLock lock(&mu_);
  while (!pending_.empty()) changed_.Wait(&mu_);
}

void FanOutDispatcher::Stop() {
  std::thread thread;
  {
    MutexLock lock(&mu_);
    stopped_ = true;
    work_.SignalAll();
    changed_.SignalAll();
    thread.swap(thread_);
  }
  if (thread.joinable()) thread.join();  // Run() drains what is queued first.
}

void FanOutDispatcher::Run() {
  mu_.Lock();
  while (true) {
    while (ready_.empty() && !stopped_) work_.Wait(&mu_);
    if (ready_.empty()) break;
    std::string stream = std::move(ready_.front());
    ready_.pop_front();
    std::vector<EventPtr> events;
    events.swap(pending_.find(stream)->second);
    backlog_ -= events.size();
    changed_.SignalAll();
    mu_.Unlock();
    hub_->Deliver(stream, events);
    events.clear();  // Drop our references outside the lock.
    mu_.Lock();
    auto it = pending_.find(stream);
    if (it->second.empty()) {
      pending_.erase(it);
    } else {
      ready_.push_back(std::move(stream));
    }
    changed_.SignalAll();
  }
  mu_.Unlock();
}

}  // namespace keel
