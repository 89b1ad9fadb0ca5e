// ColdIndex: what the durable driver knows of each stream's cold segments
// (cold_layout.h), in memory.
//
// Open reads each stream's summary only (one record per stream); a
// stream's list of segments is read from the store the first time it is
// needed (a read below the hot window, a tiering, an expiry) and kept.
// Lists are immutable snapshots replaced whole, so a reader holds one
// without a lock while the committer installs the next.
//
// Thread safety: thread-safe. Install is called by one thread at a time
// (the durable log's commit lock).
#ifndef KEEL_DRIVERS_DURABLE_COLD_INDEX_H_
#define KEEL_DRIVERS_DURABLE_COLD_INDEX_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/core/mutex.h"
#include "keel/drivers/durable/cold_layout.h"
#include "keel/statestore/state_store.h"

namespace keel::durable {

using ColdSegments = std::vector<ColdSegment>;  // Ordered by first; contiguous.

class ColdIndex {
 public:
  ColdIndex(StateStore& store, absl::flat_hash_map<std::string, ColdSummary> summaries);

  ColdSummary SummaryOf(absl::string_view stream) const;
  // Streams that have live segments.
  std::vector<std::string> Streams() const;
  uint64_t TotalSegments() const;
  uint64_t TotalObjectBytes() const;

  // The live segments of `stream` (empty when none); kDataLoss naming the
  // key when a record does not decode.
  absl::StatusOr<std::shared_ptr<const ColdSegments>> SegmentsOf(absl::string_view stream);

  // Makes `segments` the stream's list (they must be loaded first).
  void Install(absl::string_view stream, ColdSegments segments);

  static ColdSummary Summarize(const ColdSegments& segments);

 private:
  StateStore& store_;
  mutable Mutex mu_;
  absl::flat_hash_map<std::string, ColdSummary> summaries_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::shared_ptr<const ColdSegments>> loaded_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace keel::durable

#endif  // KEEL_DRIVERS_DURABLE_COLD_INDEX_H_
