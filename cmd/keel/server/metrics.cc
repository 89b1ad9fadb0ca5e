#include "keel/cmd/keel/server/metrics.h"

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/process_memory.h"

namespace keel::server {
namespace {

void Header(std::string& out, absl::string_view name, absl::string_view type,
            absl::string_view help) {
  absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

void Single(std::string& out, absl::string_view name, absl::string_view type,
            absl::string_view help, uint64_t value) {
  Header(out, name, type, help);
  absl::StrAppend(&out, name, " ", value, "\n");
}

template <typename T>
void Single(std::string& out, absl::string_view name, absl::string_view type,
            absl::string_view help, const std::atomic<T>& value) {
  Single(out, name, type, help, static_cast<uint64_t>(value.load(std::memory_order_relaxed)));
}

}  // namespace

void LatencyHistogram::Observe(absl::Duration latency) {
  const double seconds = absl::ToDoubleSeconds(latency);
  size_t bucket = 0;
  while (bucket < kBucketsSeconds.size() && seconds > kBucketsSeconds[bucket]) ++bucket;
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_nanos_.fetch_add(static_cast<uint64_t>(absl::ToInt64Nanoseconds(latency)),
                       std::memory_order_relaxed);
}

void LatencyHistogram::Render(absl::string_view name, absl::string_view help,
                              std::string& out) const {
  Header(out, name, "histogram", help);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kBucketsSeconds.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    absl::StrAppend(&out, name, "_bucket{le=\"", kBucketsSeconds[i], "\"} ", cumulative, "\n");
  }
  cumulative += buckets_.back().load(std::memory_order_relaxed);
  absl::StrAppend(&out, name, "_bucket{le=\"+Inf\"} ", cumulative, "\n");
  absl::StrAppend(&out, name, "_sum ", sum_nanos_.load(std::memory_order_relaxed) / 1e9, "\n");
  absl::StrAppend(&out, name, "_count ", count_.load(std::memory_order_relaxed), "\n");
}

void Metrics::CountPublished(uint64_t events, uint64_t bytes) {
  published_events_.fetch_add(events, std::memory_order_relaxed);
  published_bytes_.fetch_add(bytes, std::memory_order_relaxed);
}

void Metrics::CountError(absl::string_view code) {
  size_t i = 0;
  while (i < kErrorCodes.size() && kErrorCodes[i] != code) ++i;
  errors_[i].fetch_add(1, std::memory_order_relaxed);
}

void Metrics::CountTrim(uint64_t events, uint64_t bytes, uint64_t dedupe_keys) {
  trim_runs_.fetch_add(1, std::memory_order_relaxed);
  trimmed_events_.fetch_add(events, std::memory_order_relaxed);
  trimmed_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  collected_keys_.fetch_add(dedupe_keys, std::memory_order_relaxed);
}

std::string Metrics::Render() const {
  std::string out;
  Single(out, "keel_http_requests_total", "counter", "HTTP requests received.", requests_);
  Single(out, "keel_published_events_total", "counter", "Events published.", published_events_);
  Single(out, "keel_published_bytes_total", "counter", "Payload bytes published.",
         published_bytes_);
  Header(out, "keel_errors_total", "counter", "Error responses by error code.");
  for (size_t i = 0; i <= kErrorCodes.size(); ++i) {
    absl::StrAppend(&out, "keel_errors_total{code=\"",
                    i < kErrorCodes.size() ? kErrorCodes[i] : "other", "\"} ",
                    errors_[i].load(std::memory_order_relaxed), "\n");
  }
  Single(out, "keel_sse_connections", "gauge", "Open SSE connections.", sse_open_);
  Single(out, "keel_sse_shared_connections", "gauge",
         "Open SSE connections served by their stream's shared writes.", sse_shared_);
  Single(out, "keel_sse_unsent_bytes", "gauge",
         "Bytes SSE connections hold for their clients: pending, or in a write not yet done.",
         sse_unsent_);
  Single(out, "keel_sse_delivered_events_total", "counter", "Events written to SSE clients.",
         delivered_);
  Single(out, "keel_sse_gaps_total", "counter", "keel.gap frames sent (retention gaps).", gaps_);
  Single(out, "keel_sse_catch_up_reads_total", "counter",
         "Pages SSE subscribers read from the store to catch up (slow or resuming clients).",
         catch_up_reads_);
  Single(out, "keel_retention_trims_total", "counter",
         "Retention trim passes that ran (only while something was over a bound).", trim_runs_);
  Single(out, "keel_retention_trimmed_events_total", "counter",
         "Events deleted past a retention bound.", trimmed_events_);
  Single(out, "keel_retention_trimmed_bytes_total", "counter",
         "Bytes of events deleted past a retention bound.", trimmed_bytes_);
  Single(out, "keel_idempotency_keys_collected_total", "counter",
         "Expired idempotency keys removed.", collected_keys_);
  Header(out, "keel_process_heap_bytes", "gauge",
         "Heap memory the daemon's allocations hold (not what the allocator keeps freed).");
  absl::StrAppend(&out, "keel_process_heap_bytes ", HeapInUseBytes(), "\n");
  publish_latency_.Render("keel_publish_latency_seconds",
                          "Publish request latency inside the daemon.", out);
  store_write_latency_.Render("keel_store_write_latency_seconds",
                              "Latency of one group-commit write to the state store.", out);
  return out;
}

std::string ColdTierMetrics(EventBus& bus) {
  std::string out;
  if (bus.tiers() == nullptr) return out;
  const ColdStats stats = bus.tiers()->Stats();
  Single(out, "keel_cold_segments", "gauge", "Live cold segments (all streams).", stats.segments);
  Single(out, "keel_cold_bytes", "gauge", "Bytes of the live cold segments' objects.",
         stats.object_bytes);
  Single(out, "keel_cold_uploads_total", "counter",
         "Segments uploaded to the cold store and made live.", stats.uploads);
  Single(out, "keel_cold_upload_failures_total", "counter",
         "Segment uploads the cold store refused or failed (tiering pauses and retries).",
         stats.upload_failures);
  Single(out, "keel_cold_reads_total", "counter",
         "Cold segments read (replays below the hot window).", stats.cold_reads);
  Single(out, "keel_cold_expired_segments_total", "counter", "Cold segments expired by retention.",
         stats.expired_segments);
  Single(out, "keel_cold_paused", "gauge",
         "1 while the cold store is failing and tiering waits, else 0.", stats.paused ? 1 : 0);
  return out;
}

}  // namespace keel::server
