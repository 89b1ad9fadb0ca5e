#include "drivers/memory/memory_bus.h"

#include <algorithm>
#include <deque>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "core/dedupe_table.h"
#include "core/driver_base.h"
#include "core/errors.h"
#include "core/status_macros.h"

namespace keel {
namespace {

class MemoryBus final : public DriverBase {
 public:
  MemoryBus(const MemoryRingLimits& limits, const DriverContext& context)
      : DriverBase(context, PublishLimits{}), limits_(limits), epoch_(NewEpoch()) {
    InitFanOut();
  }
  ~MemoryBus() override { Close().IgnoreError(); }

  absl::StatusOr<ReplayPage> Replay(const ReplayRequest& request) override;
  absl::StatusOr<StreamInfo> Bounds(absl::string_view stream) override;
  absl::StatusOr<std::vector<StreamInfo>> ListStreams(absl::string_view prefix,
                                                      size_t limit) override;
  uint64_t epoch() const override { return epoch_; }
  
  bool NeedsTrim() const override;

 protected:
  absl::StatusOr<std::vector<Receipt>> Append(absl::string_view stream,
                                              std::vector<Event> events,
                                              const AppendRequest& request) override;
  absl::StatusOr<TrimReport> TrimRetention(size_t budget) override;

 private:
  struct Ring {
    mutable Mutex mu;
    std::deque<EventPtr> events ABSL_GUARDED_BY(mu);
    uint64_t first ABSL_GUARDED_BY(mu) = 1;  // Sequence of events.front().
    uint64_t next ABSL_GUARDED_BY(mu) = 1;   // Sequence the next event gets.
    uint64_t bytes ABSL_GUARDED_BY(mu) = 0;
    absl::Time last_time ABSL_GUARDED_BY(mu) = absl::InfinitePast();
    DedupeTable dedupe ABSL_GUARDED_BY(mu);
  };

  static uint64_t NewEpoch() {
    absl::BitGen gen;
    return absl::Uniform<uint64_t>(absl::IntervalClosed, gen, 1, UINT64_MAX);
  }

  Ring* FindRing(absl::string_view stream) const;
  Ring& FindOrAddRing(absl::string_view stream);
  StreamInfo InfoLocked(absl::string_view stream, const Ring& ring) const
      ABSL_SHARED_LOCKS_REQUIRED(ring.mu);
  // Evicts past the ring limits, the retention bounds of `policy` and, with
  // `budget`, at most that many events. Returns {events, bytes} evicted.
  std::pair<uint64_t, uint64_t> EvictLocked(Ring& ring, const RetentionLimits& retention,
                                            absl::Time now, uint64_t budget = UINT64_MAX)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(ring.mu);
  std::vector<std::pair<std::string, Ring*>> RingsWithPrefix(absl::string_view prefix) const;

  const MemoryRingLimits limits_;
  const uint64_t epoch_;
  mutable Mutex rings_mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<Ring>> rings_ ABSL_GUARDED_BY(rings_mu_);
};

MemoryBus::Ring* MemoryBus::FindRing(absl::string_view stream) const {
  ReaderMutexLock lock(&rings_mu_);
  auto it = rings_.find(stream);
  return it == rings_.end() ? nullptr : it->second.get();
}

MemoryBus::Ring& MemoryBus::FindOrAddRing(absl::string_view stream) {
  if (Ring* ring = FindRing(stream)) return *ring;
  MutexLock lock(&rings_mu_);
  auto& slot = rings_[stream];
  if (!slot) slot = std::make_unique<Ring>();
  return *slot;
}

StreamInfo MemoryBus::InfoLocked(absl::string_view stream, const Ring& ring) const {
  StreamInfo info;
  info.stream = std::string(stream);
  info.first_sequence = ring.first;
  info.last_sequence = ring.next - 1;
  info.count = ring.events.size();
  info.bytes = ring.bytes;
  if (!ring.events.empty()) info.oldest_time = ring.events.front()->time;
  info.head = Cursor::For(stream, epoch_, info.last_sequence);
  return info;
}

std::pair<uint64_t, uint64_t> MemoryBus::EvictLocked(Ring& ring, const RetentionLimits& retention,
                                                      absl::Time now, uint64_t budget) {
  auto over = [&] {
    // The ring limits keep at least the newest event even if it alone is over
    // the byte bound; retention bounds may empty the stream.
    if (ring.events.size() > 1 && (ring.events.size() > limits_.max_events_per_stream ||
                                   ring.bytes > limits_.max_bytes_per_stream)) {
      return true;
    }
    return !ring.events.empty() && retention.Exceeded(ring.events.size(), ring.bytes,
                                                      ring.events.front()->time, now);
  };
  std::pair<uint64_t, uint64_t> evicted;
  while (evicted.first < budget && over()) {
    const uint64_t size = ring.events.front()->ApproximateSize();
    ring.bytes -= size;
    ring.events.pop_front();
    ++ring.first;
    ++evicted.first;
    evicted.second += size;
  }
  return evicted;
}

absl::StatusOr<std::vector<Receipt>> MemoryBus::Append(absl::string_view stream,
                                                       std::vector<Event> events,
                                                       const AppendRequest& request) {
  Ring& ring = FindOrAddRing(stream);
  const absl::Time now = context().clock->Now();
  const RetentionLimits retention = policies().PolicyOf(stream).retention;
  MutexLock lock(&ring.mu);
  KEEL_ASSIGN_OR_RETURN(AppendPlan plan,
                        PlanAppend(events, request, ring.next - 1, [&](absl::string_view key) {
                          return ring.dedupe.Find(key, now);
                        }));
  for (size_t i : plan.append) {
    Event& event = events[i];
    event.sequence = ring.next++;
    event.time = std::max(event.time, ring.last_time);
    ring.last_time = event.time;
    if (event.idempotency_key && request.dedupe_window > absl::ZeroDuration()) {
      ring.dedupe.Remember(*event.idempotency_key, DedupeHit{event.sequence, event.id},
                           event.time + request.dedupe_window);
    }
  }
  std::vector<Receipt> receipts = PlannedReceipts(plan, events, stream, epoch_);
  std::vector<EventPtr> stored;
  stored.reserve(plan.append.size());
  for (size_t i : plan.append) {
    ring.bytes += events[i].ApproximateSize();
    stored.push_back(std::make_shared<const Event>(std::move(events[i])));
    ring.events.push_back(stored.back());
  }
  EvictLocked(ring, retention, now);
  fanout().Deliver(stream, stored);  // Under the ring lock: in sequence order.
  return receipts;
}

absl::StatusOr<TrimReport> MemoryBus::TrimRetention(size_t budget) {
  TrimReport report;
  const absl::Time now = context().clock->Now();
  for (const auto& [name, ring] : RingsWithPrefix("")) {
    const RetentionLimits retention = policies().PolicyOf(name).retention;
    MutexLock lock(&ring->mu);
    auto [events, bytes] = EvictLocked(*ring, retention, now, budget - report.events);
    report.events += events;
    report.bytes += bytes;
    report.dedupe_keys += ring->dedupe.CollectExpired(now);
    if (report.events >= budget) {
      report.more = true;
      break;
    }
  }
  return report;
}

bool MemoryBus::NeedsTrim() const {
  // Evictions by count and bytes happen on publish; only age bounds and
  // idempotency keys wait for Trim.
  const absl::Time now = context().clock->Now();
  for (const auto& [name, ring] : RingsWithPrefix("")) {
    const RetentionLimits retention = policies().PolicyOf(name).retention;
    ReaderMutexLock lock(&ring->mu);
    if (ring->dedupe.NextExpiry() <= now) return true;
    if (!ring->events.empty() &&
        retention.Exceeded(ring->events.size(), ring->bytes, ring->events.front()->time, now)) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<StreamInfo> MemoryBus::Bounds(absl::string_view stream) {
  KEEL_RETURN_IF_ERROR(ValidateStreamName(stream));
  Ring* ring = FindRing(stream);
  if (ring == nullptr) {
    StreamInfo info;
    info.stream = std::string(stream);
    info.head = Cursor::For(stream, epoch_, 0);
    return info;
  }
  ReaderMutexLock lock(&ring->mu);
  return InfoLocked(stream, *ring);
}

absl::StatusOr<ReplayPage> MemoryBus::Replay(const ReplayRequest& request) {
  KEEL_RETURN_IF_ERROR(ValidateReplayRequest(request));
  Ring empty;
  Ring* ring = FindRing(request.stream);
  if (ring == nullptr) ring = &empty;
  ReaderMutexLock lock(&ring->mu);
  StreamInfo info = InfoLocked(request.stream, *ring);
  KEEL_ASSIGN_OR_RETURN(uint64_t after, ResolvePosition(request.after, info, epoch_));
  KEEL_ASSIGN_OR_RETURN(uint64_t end, ResolveUntil(request, info, epoch_));

  ReplayPage page;
  page.head_sequence = info.last_sequence;
  uint64_t scanned = after;
  for (uint64_t seq = after + 1; seq <= end && page.events.size() < request.limit; ++seq) {
    const Event& event = *ring->events[seq - ring->first];
    scanned = seq;
    if (request.filter.Matches(event)) page.events.push_back(event);
  }
  page.next = Cursor::For(request.stream, epoch_, scanned);
  page.reached_end = scanned >= end;
  return page;
}

std::vector<std::pair<std::string, MemoryBus::Ring*>> MemoryBus::RingsWithPrefix(
    absl::string_view prefix) const {
  std::vector<std::pair<std::string, Ring*>> matches;
  {
    ReaderMutexLock lock(&rings_mu_);
    for (const auto& [name, ring] : rings_) {
      if (absl::StartsWith(name, prefix)) matches.emplace_back(name, ring.get());
    }
  }
  std::sort(matches.begin(), matches.end());
  return matches;
}

absl::StatusOr<std::vector<StreamInfo>> MemoryBus::ListStreams(absl::string_view prefix,
                                                               size_t limit) {
  std::vector<std::pair<std::string, Ring*>> matches = RingsWithPrefix(prefix);
  if (matches.size() > limit) matches.resize(limit);
  std::vector<StreamInfo> infos;
  for (const auto& [name, ring] : matches) {
    ReaderMutexLock lock(&ring->mu);
    infos.push_back(InfoLocked(name, *ring));
  }
  return infos;
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
  return std::make_unique<MemoryBus>(limits, context);
}

}  // namespace keel
