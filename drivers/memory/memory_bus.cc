#include "drivers/memory/memory_bus.h"

#include <algorithm>
#include <deque>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/random/random.h"
#include "absl/strings/match.h"
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

 protected:
  absl::StatusOr<std::vector<Receipt>> Append(absl::string_view stream,
                                              std::vector<Event> events) override;

 private:
  struct Ring {
    mutable Mutex mu;
    std::deque<EventPtr> events ABSL_GUARDED_BY(mu);
    uint64_t first ABSL_GUARDED_BY(mu) = 1;  // Sequence of events.front().
    uint64_t next ABSL_GUARDED_BY(mu) = 1;   // Sequence the next event gets.
    uint64_t bytes ABSL_GUARDED_BY(mu) = 0;
  };

  static uint64_t NewEpoch() {
    absl::BitGen gen;
    return absl::Uniform<uint64_t>(absl::IntervalClosed, gen, 1, UINT64_MAX);
  }

  Ring* FindRing(absl::string_view stream) const;
  Ring& FindOrAddRing(absl::string_view stream);
  StreamInfo InfoLocked(absl::string_view stream, const Ring& ring) const
      ABSL_SHARED_LOCKS_REQUIRED(ring.mu);
  void EvictLocked(Ring& ring) ABSL_EXCLUSIVE_LOCKS_REQUIRED(ring.mu);

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

void MemoryBus::EvictLocked(Ring& ring) {
  // Keep at least the newest event even if it alone is over the byte bound.
  while (ring.events.size() > 1 && (ring.events.size() > limits_.max_events_per_stream ||
                                    ring.bytes > limits_.max_bytes_per_stream)) {
    ring.bytes -= ring.events.front()->ApproximateSize();
    ring.events.pop_front();
    ++ring.first;
  }
}

absl::StatusOr<std::vector<Receipt>> MemoryBus::Append(absl::string_view stream,
                                                       std::vector<Event> events) {
  Ring& ring = FindOrAddRing(stream);
  std::vector<Receipt> receipts;
  std::vector<EventPtr> stored;
  receipts.reserve(events.size());
  stored.reserve(events.size());
  MutexLock lock(&ring.mu);
  for (Event& event : events) {
    event.sequence = ring.next++;
    receipts.push_back(MakeReceipt(event));
    ring.bytes += event.ApproximateSize();
    stored.push_back(std::make_shared<const Event>(std::move(event)));
    ring.events.push_back(stored.back());
  }
  EvictLocked(ring);
  fanout().Deliver(stream, stored);  // Under the ring lock: in sequence order.
  return receipts;
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

absl::StatusOr<std::vector<StreamInfo>> MemoryBus::ListStreams(absl::string_view prefix,
                                                               size_t limit) {
  std::vector<std::pair<std::string, Ring*>> matches;
  {
    ReaderMutexLock lock(&rings_mu_);
    for (const auto& [name, ring] : rings_) {
      if (absl::StartsWith(name, prefix)) matches.emplace_back(name, ring.get());
    }
  }
  std::sort(matches.begin(), matches.end());
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
