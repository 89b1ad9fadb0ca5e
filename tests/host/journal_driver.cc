// `host-journal`: a driver defined by a host program, outside Keel's tree.
//
// It is what a real host writes: storage only. A keel::StreamLog keeps each
// stream's events in a deque behind one mutex; keel::NewLogBus turns it into
// a whole EventBus (validation, sequences, idempotency, expected last
// sequence, fan-out, cursors, retention, consumer groups); a DriverFactory
// and the one-line KEEL_REGISTER_DRIVER make it selectable by name. Nothing
// is persisted, so each instance draws a fresh random epoch: cursors of an
// earlier instance are reported as mismatches, never misread.
//
// Thread safety: every method takes `mu_` (a keel::Mutex, which
// ThreadSanitizer sees); Append and TrimPrefix come from one thread at a time.
#include <algorithm>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "keel/core/driver_factory.h"
#include "keel/core/log_bus.h"
#include "keel/core/mutex.h"
#include "keel/core/stream_log.h"

namespace host {
namespace {

class JournalLog final : public keel::StreamLog {
 public:
  uint64_t epoch() const override { return epoch_; }

  absl::StatusOr<keel::LogBounds> Bounds(absl::string_view stream) override {
    keel::MutexLock lock(&mu_);
    auto it = journals_.find(stream);
    return it == journals_.end() ? keel::LogBounds{} : BoundsOf(it->second);
  }

  absl::StatusOr<std::vector<std::pair<std::string, keel::LogBounds>>> List(
      absl::string_view prefix, size_t limit) override {
    keel::MutexLock lock(&mu_);
    std::vector<std::pair<std::string, keel::LogBounds>> listed;
    for (const auto& [name, journal] : journals_) {
      if (absl::StartsWith(name, prefix)) listed.emplace_back(name, BoundsOf(journal));
    }
    std::sort(listed.begin(), listed.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    if (listed.size() > limit) listed.resize(limit);
    return listed;
  }

  absl::Status Read(absl::string_view stream, uint64_t from, uint64_t to,
                    keel::ReadSink& sink) override {
    keel::MutexLock lock(&mu_);
    auto it = journals_.find(stream);
    if (it == journals_.end()) return absl::OkStatus();
    const Journal& journal = it->second;
    for (uint64_t seq = std::max(from, journal.first); seq <= to && seq < Next(journal); ++seq) {
      sink.Slot() = journal.events[seq - journal.first];
      if (!sink.Take()) break;
    }
    return absl::OkStatus();
  }

  absl::Status Append(absl::Span<const keel::LogAppend> group) override {
    keel::MutexLock lock(&mu_);
    for (const keel::LogAppend& part : group) {
      Journal& journal = journals_[part.stream];
      for (const keel::Event& event : part.events) {
        journal.bytes += event.ApproximateSize();
        journal.events.push_back(event);
      }
    }
    return absl::OkStatus();
  }

  absl::Status TrimPrefix(absl::string_view stream, const keel::LogTrim& cut) override {
    keel::MutexLock lock(&mu_);
    Journal& journal = journals_[stream];
    if (journal.first != cut.from) return absl::AbortedError("trimmed since planned");
    for (; journal.first < cut.new_first && !journal.events.empty(); ++journal.first) {
      journal.bytes -= journal.events.front().ApproximateSize();
      journal.events.pop_front();
    }
    return absl::OkStatus();
  }

 private:
  struct Journal {
    std::deque<keel::Event> events;  // events[i] has sequence first + i.
    uint64_t first = 1;
    uint64_t bytes = 0;
  };

  static uint64_t Next(const Journal& journal) { return journal.first + journal.events.size(); }
  static keel::LogBounds BoundsOf(const Journal& journal) {
    keel::LogBounds bounds{journal.first, Next(journal), journal.bytes};
    if (!journal.events.empty()) bounds.oldest_time = journal.events.front().time;
    return bounds;
  }

  const uint64_t epoch_ = absl::Uniform<uint64_t>(absl::IntervalClosed, absl::BitGen(), 1,
                                                  UINT64_MAX);
  keel::Mutex mu_;
  absl::flat_hash_map<std::string, Journal> journals_ ABSL_GUARDED_BY(mu_);
};

class JournalFactory : public keel::DriverFactory {
 public:
  absl::string_view name() const override { return "host-journal"; }
  absl::string_view description() const override {
    return "host program's driver: an in-memory journal per stream";
  }
  absl::StatusOr<std::unique_ptr<keel::EventBus>> Create(
      const keel::Config& config, const keel::DriverContext& context) const override {
    return keel::NewLogBus(std::make_unique<JournalLog>(), context);
  }
};

}  // namespace
}  // namespace host

KEEL_REGISTER_DRIVER(host_journal, host::JournalFactory);
