#include "keel/cmd/keel/server/rate_limiter.h"

#include <algorithm>

namespace keel::server {

RateLimiter::RateLimiter(double per_second, double burst, size_t max_clients)
    : per_second_(per_second), burst_(burst), max_clients_(std::max<size_t>(max_clients, 1)) {}

std::optional<absl::Duration> RateLimiter::Admit(absl::string_view client, Clock::time_point now) {
  MutexLock lock(&mu_);
  auto it = buckets_.find(client);
  if (it == buckets_.end()) {
    if (buckets_.size() >= max_clients_) MakeRoom(now);
    it = buckets_.emplace(std::string(client), Bucket{burst_, now}).first;
  }
  Bucket& bucket = it->second;
  Refill(bucket, now);
  if (bucket.tokens >= 1) {
    bucket.tokens -= 1;
    return std::nullopt;
  }
  return absl::Seconds((1 - bucket.tokens) / per_second_);
}

size_t RateLimiter::clients() const {
  MutexLock lock(&mu_);
  return buckets_.size();
}

void RateLimiter::Refill(Bucket& bucket, Clock::time_point now) const {
  if (now <= bucket.updated) return;
  const double elapsed = std::chrono::duration<double>(now - bucket.updated).count();
  bucket.tokens = std::min(burst_, bucket.tokens + elapsed * per_second_);
  bucket.updated = now;
}

void RateLimiter::MakeRoom(Clock::time_point now) {
  absl::erase_if(buckets_, [&](auto& entry) {
    Refill(entry.second, now);
    return entry.second.tokens >= burst_;
  });
  const size_t target = max_clients_ - std::max<size_t>(max_clients_ / 10, 1);
  for (auto it = buckets_.begin(); buckets_.size() > target;) buckets_.erase(it++);
}

}  // namespace keel::server
