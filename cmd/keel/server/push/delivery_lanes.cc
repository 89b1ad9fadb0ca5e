#include "keel/cmd/keel/server/push/delivery_lanes.h"

namespace keel::push {

DeliveryLanes::Lane::Lane(const PushSubscription& subscription, const EndpointUrl& url,
                          const std::string& ca_file, CircuitBreaker& circuit, DeliveryStats& stats,
                          const PushSleeper& sleep, const SecretSource& secrets)
    : sender(url, subscription.timeout, ca_file),
      poster(subscription, sender, circuit, stats, sleep, secrets) {}

DeliveryLanes::DeliveryLanes(const PushSubscription& subscription, const EndpointUrl& url,
                             const std::string& ca_file, CircuitBreaker& circuit,
                             DeliveryStats& stats, const PushSleeper& sleep,
                             const SecretSource& secrets) {
  for (int i = 0; i < subscription.concurrency; ++i) {
    lanes_.push_back(
        std::make_unique<Lane>(subscription, url, ca_file, circuit, stats, sleep, secrets));
  }
  for (size_t i = 1; i < lanes_.size(); ++i) {
    helpers_.emplace_back([this, &lane = *lanes_[i]] { Helper(lane); });
  }
}

DeliveryLanes::~DeliveryLanes() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    changed_.SignalAll();
  }
  for (std::thread& helper : helpers_) helper.join();
}

absl::StatusOr<bool> DeliveryLanes::RunPass(const std::vector<std::string>& streams,
                                            const StreamStep& step) {
  {
    MutexLock lock(&mu_);
    pass_ = Pass{&streams, &step, 0, static_cast<int>(helpers_.size()), false, absl::OkStatus()};
    ++generation_;
    changed_.SignalAll();
  }
  Work(*lanes_.front());
  MutexLock lock(&mu_);
  while (pass_.working > 0) changed_.Wait(&mu_);
  if (!pass_.error.ok()) return pass_.error;
  return pass_.progress;
}

void DeliveryLanes::Work(Lane& lane) {
  for (;;) {
    const std::string* stream;
    const StreamStep* step;
    {
      MutexLock lock(&mu_);
      if (pass_.next >= pass_.streams->size()) return;
      stream = &(*pass_.streams)[pass_.next++];
      step = pass_.step;
    }
    absl::StatusOr<bool> stepped = (*step)(*stream, lane.poster);
    MutexLock lock(&mu_);
    if (!stepped.ok()) {
      if (pass_.error.ok()) pass_.error = stepped.status();
    } else {
      pass_.progress = pass_.progress || *stepped;
    }
  }
}

void DeliveryLanes::Helper(Lane& lane) {
  uint64_t done = 0;  // The last pass this lane worked.
  for (;;) {
    {
      MutexLock lock(&mu_);
      while (!stopping_ && generation_ == done) changed_.Wait(&mu_);
      if (stopping_) return;
      done = generation_;
    }
    Work(lane);
    MutexLock lock(&mu_);
    --pass_.working;
    changed_.SignalAll();
  }
}

}  // namespace keel::push
