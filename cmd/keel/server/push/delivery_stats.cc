#include "keel/cmd/keel/server/push/delivery_stats.h"

namespace keel::push {

void DeliveryStats::Delivered(uint64_t events, int status, absl::Duration latency) {
  MutexLock lock(&mu_);
  ++counts_.deliveries;
  counts_.events_delivered += events;
  ++counts_.latency_count;
  counts_.latency_sum += latency;
  counts_.last_status = status;
}

void DeliveryStats::Failed(int status, const std::string& reason, absl::Duration latency) {
  MutexLock lock(&mu_);
  ++counts_.failures;
  if (status != 0) {
    ++counts_.latency_count;
    counts_.latency_sum += latency;
  }
  counts_.last_status = status;
  counts_.last_error = reason;
  counts_.last_error_time = absl::Now();
}

void DeliveryStats::RedriveFailed(const std::string& reason) {
  MutexLock lock(&mu_);
  counts_.redrive_error = reason;
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
