// Metrics: the daemon's counters, gauges and histograms, rendered in the
// Prometheus text format at GET /metrics.
//
// Counters are lock-free atomics on the hot paths (publish, delivery); error
// codes are a small fixed set and also atomics.
//
// Thread safety: every method is safe to call concurrently.
#ifndef KEEL_CMD_KEEL_SERVER_METRICS_H_
#define KEEL_CMD_KEEL_SERVER_METRICS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/core/event_bus.h"

namespace keel::server {

// A latency histogram with fixed buckets from 50 µs to 10 s.
class LatencyHistogram {
 public:
  static constexpr std::array<double, 14> kBucketsSeconds = {
      0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
      0.01,    0.025,  0.05,    0.1,    0.25,  1.0,    10.0};

  void Observe(absl::Duration latency);
  void Render(absl::string_view name, absl::string_view help, std::string& out) const;
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }

 private:
  std::array<std::atomic<uint64_t>, kBucketsSeconds.size() + 1> buckets_{};  // Last is +Inf.
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_nanos_{0};
};

class Metrics {
 public:
  void CountRequest() { requests_.fetch_add(1, std::memory_order_relaxed); }
  void CountPublished(uint64_t events, uint64_t bytes);
  void CountError(absl::string_view code);
  void SseOpened() { sse_open_.fetch_add(1, std::memory_order_relaxed); }
  void SseClosed() { sse_open_.fetch_sub(1, std::memory_order_relaxed); }
  // +1 when an SSE connection joins its stream's shared writes, -1 when it leaves.
  void SseShared(int delta) { sse_shared_.fetch_add(delta, std::memory_order_relaxed); }
  // Bytes SSE sessions hold for their clients (pending, or in a write not
  // yet completed), changed by `delta`.
  void SseUnsent(int64_t delta) { sse_unsent_.fetch_add(delta, std::memory_order_relaxed); }
  void CountDelivered(uint64_t events) { delivered_.fetch_add(events, std::memory_order_relaxed); }
  void CountGap() { gaps_.fetch_add(1, std::memory_order_relaxed); }
  void CountCatchUpReads(uint64_t reads) {
    catch_up_reads_.fetch_add(reads, std::memory_order_relaxed);
  }

  // What one retention trim removed.
  void CountTrim(uint64_t events, uint64_t bytes, uint64_t dedupe_keys);

  LatencyHistogram& publish_latency() { return publish_latency_; }
  LatencyHistogram& store_write_latency() { return store_write_latency_; }

  std::string Render() const;

 private:
  static constexpr std::array<absl::string_view, 17> kErrorCodes = {
      "invalid_argument",  "invalid_cursor", "unauthenticated",   "permission_denied",
      "not_found",         "method_not_allowed", "cursor_mismatch", "conflict",
      "resource_drift",    "retention_gap",  "payload_too_large", "unsupported_media_type",
      "headers_too_large", "rate_limited",   "unavailable",       "unimplemented",
      "internal"};

  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> published_events_{0};
  std::atomic<uint64_t> published_bytes_{0};
  std::atomic<int64_t> sse_open_{0};
  std::atomic<int64_t> sse_shared_{0};
  std::atomic<int64_t> sse_unsent_{0};
  std::atomic<uint64_t> delivered_{0};
  std::atomic<uint64_t> gaps_{0};
  std::atomic<uint64_t> catch_up_reads_{0};
  std::atomic<uint64_t> trim_runs_{0};
  std::atomic<uint64_t> trimmed_events_{0};
  std::atomic<uint64_t> trimmed_bytes_{0};
  std::atomic<uint64_t> collected_keys_{0};
  std::array<std::atomic<uint64_t>, kErrorCodes.size() + 1> errors_{};  // Last: other.
  LatencyHistogram publish_latency_;
  LatencyHistogram store_write_latency_;
};

// The cold tier's figures (EventBus::tiers()) in the same format; empty for
// a bus without a cold tier.
std::string ColdTierMetrics(EventBus& bus);

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_METRICS_H_
