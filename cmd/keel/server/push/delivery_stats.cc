#include "keel/cmd/keel/server/push/delivery_stats.h"

#include <algorithm>
#include <numeric>

namespace keel::push {

const char* CircuitStateName(CircuitState state) {
  switch (state) {
    case CircuitState::kClosed:
      return "closed";
    case CircuitState::kOpen:
      return "open";
    case CircuitState::kProbing:
      return "probing";
  }
  return "closed";
}

uint64_t DeliveryCounts::LatencyCount() const {
  return std::accumulate(latency_buckets.begin(), latency_buckets.end(), uint64_t{0});
}

void DeliveryStats::Answered(absl::Duration latency) {
  counts_.latency_sum += latency;
  const size_t bucket = std::lower_bound(kLatencyBounds.begin(), kLatencyBounds.end(), latency) -
                        kLatencyBounds.begin();
  ++counts_.latency_buckets[bucket];
}

void DeliveryStats::Delivered(uint64_t events, int status, absl::Duration latency) {
  MutexLock lock(&mu_);
  ++counts_.deliveries;
  counts_.events_delivered += events;
  Answered(latency);
  counts_.last_status = status;
}

void DeliveryStats::Failed(int status, const std::string& reason, absl::Duration latency) {
  MutexLock lock(&mu_);
  ++counts_.failures;
  if (status != 0) Answered(latency);
  counts_.last_status = status;
  counts_.last_error = reason;
  counts_.last_error_time = absl::Now();
}

void DeliveryStats::RedriveFailed(const std::string& reason) {
  MutexLock lock(&mu_);
  counts_.redrive_error = reason;
}

void DeliveryStats::CircuitChanged(CircuitState state, absl::Time open_until) {
  MutexLock lock(&mu_);
  if (state == CircuitState::kOpen) ++counts_.circuit_opens;
  counts_.circuit = state;
  counts_.circuit_open_until = open_until;
}

DeliveryCounts DeliveryStats::Snapshot() const {
  DeliveryCounts counts;
  {
    MutexLock lock(&mu_);
    counts = counts_;
  }
  counts.retries = retries_.load(std::memory_order_relaxed);
  counts.dead_lettered = dead_lettered_.load();
  counts.redriven = redriven_.load();
  return counts;
}

}  // namespace keel::push
