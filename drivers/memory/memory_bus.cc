#include "keel/drivers/memory/memory_bus.h"

#include <algorithm>
#include <deque>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "keel/core/log_bus.h"
#include "keel/core/mutex.h"
#include "keel/core/status_macros.h"
#include "keel/core/stream_log.h"

namespace keel {
namespace {

// The ring of one stream; events [first, next) are kept.
struct Ring {
  mutable Mutex mu;
  std::deque<EventPtr> events ABSL_GUARDED_BY(mu);
  uint64_t first ABSL_GUARDED_BY(mu) = 1;  // Sequence of events.front().
  uint64_t next ABSL_GUARDED_BY(mu) = 1;   // Sequence the next event gets.
  uint64_t bytes ABSL_GUARDED_BY(mu) = 0;
  uint64_t incarnation_start ABSL_GUARDED_BY(mu) = 0;  // LogBounds::incarnation_start.
  // The ring of a deleted stream stays (readers hold it without rings_mu_)
  // and keeps its incarnation's start; it is listed again once appended to.
  bool ListedLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu) {
    return incarnation_start == 0 || next > incarnation_start + 1;
  }
};

// The memory driver's storage: a ring per stream, bounded by `limits`
// (evicting its oldest events as new ones come), nothing persisted.
class MemoryLog final : public StreamLog {
 public:
  explicit MemoryLog(const MemoryRingLimits& limits) : limits_(limits), epoch_(NewEpoch()) {}

  uint64_t epoch() const override { return epoch_; }
  absl::StatusOr<LogBounds> Bounds(absl::string_view stream) override;
  absl::StatusOr<std::vector<std::pair<std::string, LogBounds>>> List(absl::string_view prefix,
                                                                      size_t limit) override;
  absl::Status Read(absl::string_view stream, uint64_t from, uint64_t to, ReadSink& sink) override;
  absl::Status Append(absl::Span<const LogAppend> group) override;
  absl::Status TrimPrefix(absl::string_view stream, const LogTrim& cut) override;
  bool DeletesStreams() const override { return true; }
  absl::Status DeleteStream(absl::string_view stream) override;

 private:
  static uint64_t NewEpoch() {
    absl::BitGen gen;
    return absl::Uniform<uint64_t>(absl::IntervalClosed, gen, 1, UINT64_MAX);
  }
  static LogBounds BoundsLocked(const Ring& ring) ABSL_SHARED_LOCKS_REQUIRED(ring.mu);
  Ring* FindRing(absl::string_view stream) const;
  Ring& FindOrAddRing(absl::string_view stream);
  void PopFrontLocked(Ring& ring) ABSL_EXCLUSIVE_LOCKS_REQUIRED(ring.mu);

  const MemoryRingLimits limits_;
  const uint64_t epoch_;
  mutable Mutex rings_mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<Ring>> rings_ ABSL_GUARDED_BY(rings_mu_);
};

LogBounds MemoryLog::BoundsLocked(const Ring& ring) {
  LogBounds bounds;
  bounds.first = ring.first;
  bounds.next = ring.next;
  bounds.bytes = ring.bytes;
  bounds.incarnation_start = ring.incarnation_start;
  if (!ring.events.empty()) bounds.oldest_time = ring.events.front()->time;
  return bounds;
}

Ring* MemoryLog::FindRing(absl::string_view stream) const {
  ReaderMutexLock lock(&rings_mu_);
  auto it = rings_.find(stream);
  return it == rings_.end() ? nullptr : it->second.get();
}

Ring& MemoryLog::FindOrAddRing(absl::string_view stream) {
  if (Ring* ring = FindRing(stream)) return *ring;
  MutexLock lock(&rings_mu_);
  auto& slot = rings_[stream];
  if (!slot) slot = std::make_unique<Ring>();
  return *slot;
}

absl::StatusOr<LogBounds> MemoryLog::Bounds(absl::string_view stream) {
  Ring* ring = FindRing(stream);
  if (ring == nullptr) return LogBounds{};
  ReaderMutexLock lock(&ring->mu);
  return BoundsLocked(*ring);
}

absl::StatusOr<std::vector<std::pair<std::string, LogBounds>>> MemoryLog::List(
    absl::string_view prefix, size_t limit) {
  std::vector<std::pair<std::string, Ring*>> matches;
  {
    ReaderMutexLock lock(&rings_mu_);
    for (const auto& [name, ring] : rings_) {
      if (absl::StartsWith(name, prefix)) matches.emplace_back(name, ring.get());
    }
  }
  std::sort(matches.begin(), matches.end());
  std::vector<std::pair<std::string, LogBounds>> listed;
  listed.reserve(std::min(matches.size(), limit));
  for (auto& [name, ring] : matches) {
    if (listed.size() >= limit) break;
    ReaderMutexLock lock(&ring->mu);
    if (ring->ListedLocked()) listed.emplace_back(std::move(name), BoundsLocked(*ring));
  }
  return listed;
}

absl::Status MemoryLog::Read(absl::string_view stream, uint64_t from, uint64_t to, ReadSink& sink) {
  Ring* ring = FindRing(stream);
  if (ring == nullptr) return absl::OkStatus();
  ReaderMutexLock lock(&ring->mu);
  for (uint64_t seq = std::max(from, ring->first); seq <= to && seq < ring->next; ++seq) {
    sink.Slot() = *ring->events[seq - ring->first];
    if (!sink.Take()) break;
  }
  return absl::OkStatus();
}

void MemoryLog::PopFrontLocked(Ring& ring) {
  ring.bytes -= ring.events.front()->ApproximateSize();
  ring.events.pop_front();
  ++ring.first;
}

absl::Status MemoryLog::Append(absl::Span<const LogAppend> group) {
  for (const LogAppend& part : group) {
    Ring& ring = FindOrAddRing(part.stream);
    MutexLock lock(&ring.mu);
    for (const Event& event : part.events) {
      ring.bytes += event.ApproximateSize();
      ring.events.push_back(std::make_shared<const Event>(event));
    }
    ring.next += part.events.size();
    // The ring's bounds keep at least the newest event, even one alone over
    // the byte bound.
    while (ring.events.size() > 1 && (ring.events.size() > limits_.max_events_per_stream ||
                                      ring.bytes > limits_.max_bytes_per_stream)) {
      PopFrontLocked(ring);
    }
  }
  return absl::OkStatus();
}

absl::Status MemoryLog::TrimPrefix(absl::string_view stream, const LogTrim& cut) {
  Ring* ring = FindRing(stream);
  if (ring == nullptr) return absl::OkStatus();
  MutexLock lock(&ring->mu);
  if (ring->first != cut.from) {
    return absl::AbortedError(
        absl::StrCat("stream '", stream, "' moved since the trim was planned"));
  }
  while (ring->first < cut.new_first && !ring->events.empty()) PopFrontLocked(*ring);
  return absl::OkStatus();
}

absl::Status MemoryLog::DeleteStream(absl::string_view stream) {
  Ring* ring = FindRing(stream);
  if (ring == nullptr) return absl::OkStatus();
  MutexLock lock(&ring->mu);
  ring->events.clear();
  ring->bytes = 0;
  ring->incarnation_start = ring->next;
  ring->first = ring->next = ring->incarnation_start + 1;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<MemoryRingLimits> MemoryRingLimitsFromConfig(const Config& config) {
  MemoryRingLimits limits;
  KEEL_ASSIGN_OR_RETURN(limits.max_events_per_stream,
                        config.GetUint("max_events_per_stream", limits.max_events_per_stream, 1));
  KEEL_ASSIGN_OR_RETURN(limits.max_bytes_per_stream,
                        config.GetUint("max_bytes_per_stream", limits.max_bytes_per_stream, 1));
  return limits;
}

std::unique_ptr<EventBus> NewMemoryBus(const MemoryRingLimits& limits,
                                       const DriverContext& context) {
  // A log without a metadata store of its own cannot fail to start.
  return *NewLogBus(std::make_unique<MemoryLog>(limits), context);
}

}  // namespace keel
