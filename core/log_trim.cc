#include "keel/core/log_trim.h"

#include <algorithm>

namespace keel {
namespace {

// Walks the oldest events while the stream, without them, would still be
// over a bound.
class CutPlanner final : public ReadSink {
 public:
  CutPlanner(const LogBounds& bounds, const RetentionLimits& limits, absl::Time now,
             uint64_t budget)
      : limits_(limits), now_(now), budget_(budget), count_(bounds.count()), bytes_(bounds.bytes) {
    cut_.from = cut_.new_first = bounds.first;
  }

  Event& Slot() override { return event_; }
  bool Take() override {
    if (cut_.events() == budget_ || !limits_.Exceeded(count_, bytes_, event_.time, now_)) {
      cut_.new_oldest = event_.time;
      return false;
    }
    const uint64_t size = event_.ApproximateSize();
    cut_.new_first = event_.sequence + 1;
    cut_.bytes += size;
    bytes_ -= std::min(bytes_, size);
    return --count_ > 0;
  }

  const LogTrim& cut() const { return cut_; }

 private:
  const RetentionLimits& limits_;
  const absl::Time now_;
  const uint64_t budget_;
  uint64_t count_;
  uint64_t bytes_;
  Event event_;
  LogTrim cut_;
};

}  // namespace

absl::StatusOr<LogTrim> PlanLogTrim(StreamLog& log, absl::string_view stream,
                                    const LogBounds& bounds, const RetentionLimits& limits,
                                    absl::Time now, uint64_t budget) {
  CutPlanner planner(bounds, limits, now, budget);
  if (bounds.count() == 0 || budget == 0) return planner.cut();
  absl::Status read = log.Read(stream, bounds.first, bounds.last(), planner);
  if (!read.ok()) return read;
  return planner.cut();
}

}  // namespace keel
