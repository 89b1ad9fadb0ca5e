// `host-journal`: a driver defined by a host program, outside Keel's tree.
//
// It is what a real host would write: a class deriving from keel::DriverBase
// that only stores and reads (DriverBase validates publishes, drains on close
// and serves subscriptions through its FanOut), a DriverFactory, and the
// one-line KEEL_REGISTER_DRIVER. Storage is an unbounded, append-only vector
// per stream behind one mutex, so nothing is ever evicted and a retention gap
// cannot happen. Each instance draws a fresh random epoch: cursors of an
// earlier instance are reported as mismatches, never misread.
//
// Thread safety: every method takes `mu_` (a keel::Mutex, which ThreadSanitizer
// sees, unlike Debian's absl::Mutex); Append delivers to the fan-out
// while still holding it, so subscribers see each stream in sequence order.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "core/dedupe_table.h"
#include "core/driver_base.h"
#include "core/driver_factory.h"
#include "core/mutex.h"
#include "core/status_macros.h"

namespace host {
namespace {

using keel::Cursor;
using keel::EventPtr;
using keel::Receipt;
using keel::ReplayPage;
using keel::ReplayRequest;
using keel::StreamInfo;

class JournalBus final : public keel::DriverBase {
 public:
  explicit JournalBus(const keel::DriverContext& context)
      : DriverBase(context, keel::PublishLimits{}), epoch_(NewEpoch()) {
    InitFanOut();
  }
  ~JournalBus() override { Close().IgnoreError(); }

  absl::StatusOr<ReplayPage> Replay(const ReplayRequest& request) override {
    KEEL_RETURN_IF_ERROR(keel::ValidateReplayRequest(request));
    keel::MutexLock lock(&mu_);
    const Journal* journal = FindLocked(request.stream);
    const StreamInfo info = InfoLocked(request.stream, journal);
    KEEL_ASSIGN_OR_RETURN(uint64_t after, keel::ResolvePosition(request.after, info, epoch_));
    KEEL_ASSIGN_OR_RETURN(uint64_t end, keel::ResolveUntil(request, info, epoch_));

    ReplayPage page;
    page.head_sequence = info.last_sequence;
    uint64_t scanned = after;
    for (uint64_t seq = after + 1; seq <= end && page.events.size() < request.limit; ++seq) {
      const keel::Event& event = *journal->events[seq - 1];  // Sequence n is at index n - 1.
      scanned = seq;
      if (request.filter.Matches(event)) page.events.push_back(event);
    }
    page.next = Cursor::For(request.stream, epoch_, scanned);
    page.reached_end = scanned >= end;
    return page;
  }

  absl::StatusOr<StreamInfo> Bounds(absl::string_view stream) override {
    KEEL_RETURN_IF_ERROR(keel::ValidateStreamName(stream));
    keel::MutexLock lock(&mu_);
    return InfoLocked(stream, FindLocked(stream));
  }

  absl::StatusOr<std::vector<StreamInfo>> ListStreams(absl::string_view prefix,
                                                      size_t limit) override {
    keel::MutexLock lock(&mu_);
    std::vector<std::string> names;
    for (const auto& [name, journal] : journals_) {
      if (absl::StartsWith(name, prefix)) names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    if (names.size() > limit) names.resize(limit);
    std::vector<StreamInfo> infos;
    infos.reserve(names.size());
    for (const std::string& name : names) infos.push_back(InfoLocked(name, FindLocked(name)));
    return infos;
  }

  uint64_t epoch() const override { return epoch_; }

 protected:
  // Idempotency keys and expected sequences follow keel::PlanAppend, with
  // an in-memory dedupe index per stream.
  absl::StatusOr<std::vector<Receipt>> Append(absl::string_view stream,
                                              std::vector<keel::Event> events,
                                              const keel::AppendRequest& request) override {
    const absl::Time now = context().clock->Now();
    keel::MutexLock lock(&mu_);
    Journal& journal = journals_[stream];
    KEEL_ASSIGN_OR_RETURN(
        keel::AppendPlan plan,
        keel::PlanAppend(events, request, journal.events.size(),
                         [&](absl::string_view key) { return journal.dedupe.Find(key, now); }));
    for (size_t i : plan.append) {
      keel::Event& event = events[i];
      event.sequence = journal.events.size() + 1;
      if (!journal.events.empty()) event.time = std::max(event.time, journal.events.back()->time);
      if (event.idempotency_key && request.dedupe_window > absl::ZeroDuration()) {
        journal.dedupe.Remember(*event.idempotency_key, {event.sequence, event.id},
                                event.time + request.dedupe_window);
      }
      journal.bytes += event.ApproximateSize();
      journal.events.push_back(std::make_shared<const keel::Event>(event));
    }
    std::vector<EventPtr> stored(journal.events.end() - plan.append.size(), journal.events.end());
    fanout().Deliver(stream, stored);  // Still under mu_: in sequence order.
    return keel::PlannedReceipts(plan, events, stream, epoch_);
  }

 private:
  struct Journal {
    std::vector<EventPtr> events;  // events[i] has sequence i + 1.
    uint64_t bytes = 0;
    keel::DedupeTable dedupe;
  };

  static uint64_t NewEpoch() {
    absl::BitGen gen;
    return absl::Uniform<uint64_t>(absl::IntervalClosed, gen, 1, UINT64_MAX);
  }

  const Journal* FindLocked(absl::string_view stream) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = journals_.find(stream);
    return it == journals_.end() ? nullptr : &it->second;
  }

  // A stream never written reports first 1, last 0, count 0.
  StreamInfo InfoLocked(absl::string_view stream, const Journal* journal) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    StreamInfo info;
    info.stream = std::string(stream);
    if (journal != nullptr) {
      info.last_sequence = journal->events.size();
      info.count = journal->events.size();
      info.bytes = journal->bytes;
      if (!journal->events.empty()) info.oldest_time = journal->events.front()->time;
    }
    info.head = Cursor::For(stream, epoch_, info.last_sequence);
    return info;
  }

  const uint64_t epoch_;
  mutable keel::Mutex mu_;  // keel::Mutex: visible to ThreadSanitizer.
  absl::flat_hash_map<std::string, Journal> journals_ ABSL_GUARDED_BY(mu_);
};

class JournalFactory : public keel::DriverFactory {
 public:
  absl::string_view name() const override { return "host-journal"; }
  absl::string_view description() const override {
    return "host program's driver: unbounded in-memory journal per stream (no options)";
  }
  absl::StatusOr<std::unique_ptr<keel::EventBus>> Create(
      const keel::Config& config, const keel::DriverContext& context) const override {
    return std::make_unique<JournalBus>(context);
  }
};

}  // namespace
}  // namespace host

KEEL_REGISTER_DRIVER(host_journal, host::JournalFactory);
