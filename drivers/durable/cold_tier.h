// ColdTier: moves a durable stream's oldest entries past its hot window into
// immutable segments of a cold store, reads them back, and expires them
// (rfcs/0008-cold-segments.md, "Tiering").
//
// Tiering one segment, in this order and no other:
//   1. build the segment from hot entries [first, last]: the stream's
//      oldest, all of one store epoch, at most ColdOptions' size;
//   2. write the intent record (synced, which also makes every entry it
//      names durable), naming the range and the object;
//   3. PutIfAbsent the object (created or already present: both succeed);
//   4. in one store write, under the log's commit lock: the live record
//      replaces the intent, and the hot entries [first, last] are deleted
//      with the head moved past them, only if the head still starts at
//      `first` (a retention trim may have taken them meanwhile; then the
//      intent is rolled back and the object deleted).
// An intent found later (at open, or by the next pass when the cold store
// was down) is finished when its object is there and decodes to exactly
// its range, else rolled back: the entries are still hot, and a corrupt
// object of that name is deleted so that a new upload can take the name.
//
// Expiry (the total retention reaching cold events) marks whole segments:
// their live records become retiring records in the trim's write; the
// next pass deletes each object, then forgets its record. Orphan objects
// (no record names them) are deleted once they have been seen orphaned for
// ColdOptions::orphan_grace.
//
// Reads: ReadFrom feeds entries of the live segments in order; a segment
// that is missing, short or corrupt is kDataLoss naming the object, one the
// store cannot serve kUnavailable naming it, never skipped. The segments
// read last stay in a small cache (segment_cache.h), so that the pages of a
// sequential replay read each segment from the store once.
//
// Thread safety: Maintain and Recover run on one thread at a time (the
// trimmer's); reads and summaries from any thread; Stage*/Committed* under
// the log's commit lock.
#ifndef KEEL_DRIVERS_DURABLE_COLD_TIER_H_
#define KEEL_DRIVERS_DURABLE_COLD_TIER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/coldstore/cold_store.h"
#include "keel/core/logger.h"
#include "keel/core/mutex.h"
#include "keel/core/stream_log.h"
#include "keel/core/stream_policy.h"
#include "keel/drivers/durable/cold_index.h"
#include "keel/drivers/durable/durable_bus.h"
#include "keel/drivers/durable/key_layout.h"
#include "keel/drivers/durable/segment_cache.h"
#include "keel/statestore/state_store.h"

namespace keel::durable {

// Cold records found at open.
struct ColdRecords {
  absl::flat_hash_map<std::string, ColdSummary> summaries;
  absl::flat_hash_map<std::string, ColdSegment> intents;
  std::vector<std::pair<std::string, ColdSegment>> retiring;

  bool empty() const { return summaries.empty() && intents.empty() && retiring.empty(); }
};

// Reads the summary, intent and retiring records (O(streams) plus what is
// under way); kDataLoss naming a key that does not decode.
absl::StatusOr<ColdRecords> ReadColdRecords(StateStore& store);

// What the log does for the tier, under its commit lock.
class TierHost {
 public:
  virtual ~TierHost() = default;
  // The stream's hot head, checked against its entries.
  virtual absl::StatusOr<Head> HotHead(absl::string_view stream) = 0;
  // The first sequence of the epoch after the one holding `sequence`
  // (UINT64_MAX when none), and that epoch.
  virtual uint64_t EpochEnd(absl::string_view stream, uint64_t sequence) const = 0;
  virtual uint64_t EpochOf(absl::string_view stream, uint64_t sequence) const = 0;
  // Step 4 (see above): kAborted, with nothing written, when the hot head
  // no longer starts at segment.first.
  virtual absl::Status CommitTiered(absl::string_view stream, const ColdSegment& segment) = 0;
};

struct TierReport {
  uint64_t segments = 0;  // Uploaded and made live.
  uint64_t events = 0;
  bool more = false;  // A stream is still over its hot bound.
};

class ColdTier {
 public:
  ColdTier(StateStore& store, StoreFormat format, const ColdOptions& options, Logger& logger,
           TierHost& host, ColdRecords records);

  ColdSummary SummaryOf(absl::string_view stream) const { return index_.SummaryOf(stream); }
  ColdIndex& index() { return index_; }
  ColdStats Stats() const;

  // Feeds `sink` the cold entries of `stream` from `from` on, up to `to`
  // and at most up to the last live segment. Returns the sequence to read
  // next (hot, or cold again): past what it fed, or the first live one when
  // `from` was below it (expired), or `hot_first` when nothing cold is at or
  // after `from`. `stopped` is set when the sink asked to stop.
  absl::StatusOr<uint64_t> ReadFrom(absl::string_view stream, uint64_t from, uint64_t to,
                                    uint64_t hot_first, ReadSink& sink, bool& stopped);

  // Recovery: finishes or rolls back every intent, deletes retiring
  // objects. An unreachable cold store leaves them for the next pass.
  absl::Status Recover();
  // One pass of the trimmer: Recover, then tiers streams over their hot
  // bound (`hot_of`) until within it or `budget` events moved, then sweeps
  // orphans when due. A cold store that fails pauses tiering (warned once
  // per outage, counted) and is the pass's error; publishing is unaffected.
  absl::StatusOr<TierReport> Maintain(
      const std::vector<std::string>& streams,
      const std::function<RetentionLimits(absl::string_view)>& hot_of, absl::Time now,
      uint64_t budget);
  // Whether Maintain has work besides streams over their hot bounds.
  bool HasPendingWork() const;

  // Expiry, under the commit lock: stages into `batch` the retiring of
  // every live segment that ends before `new_first`, and returns the
  // remaining list and what the retired ones held; Retired() installs it
  // once the write succeeded.
  struct Expiry {
    ColdSegments kept;
    std::vector<ColdSegment> retired;
    uint64_t event_bytes = 0;
  };
  absl::StatusOr<Expiry> StageExpiry(absl::string_view stream, uint64_t new_first,
                                     WriteBatch& batch);
  void Retired(absl::string_view stream, Expiry expiry);

  // Step 4's records for `segment` after the stream's live ones: stages the
  // live record, the intent's delete and the summary; returns the new list.
  absl::StatusOr<ColdSegments> StageLive(absl::string_view stream, const ColdSegment& segment,
                                         WriteBatch& batch);

  absl::Status Fault(TierStep step, absl::string_view stream) const {
    return options_.fault ? options_.fault(step, stream) : absl::OkStatus();
  }

 private:
  // The entries of `segment` from `from` on: from the segment cache, or
  // else read from the cold store (a cold read: opened, its header checked
  // against its record, its blocks checked) and cached.
  absl::StatusOr<std::shared_ptr<const SegmentEntries>> EntriesFrom(absl::string_view stream,
                                                                    const ColdSegment& segment,
                                                                    uint64_t from);
  absl::Status TierOne(absl::string_view stream, const RetentionLimits& hot, absl::Time now,
                       uint64_t budget, TierReport& report, bool& within);
  absl::Status ResolveIntent(absl::string_view stream, const ColdSegment& intent);
  absl::Status RollBack(absl::string_view stream, const ColdSegment& intent, bool delete_object);
  absl::Status Retire(absl::string_view stream, const ColdSegment& segment);
  absl::Status SweepOrphans(absl::Time now);
  void ColdStoreFailed(const absl::Status& status, absl::string_view what);
  void ColdStoreWorked();

  StateStore& store_;
  const StoreFormat format_;
  const ColdOptions options_;
  Logger& logger_;
  TierHost& host_;
  ColdIndex index_;
  SegmentCache cache_;  // Of the segments read last: sequential replays read each once.

  mutable Mutex mu_;
  absl::flat_hash_map<std::string, ColdSegment> intents_ ABSL_GUARDED_BY(mu_);
  std::vector<std::pair<std::string, ColdSegment>> retiring_ ABSL_GUARDED_BY(mu_);
  // Objects found with no record, and when first so.
  absl::flat_hash_map<std::string, absl::Time> orphans_ ABSL_GUARDED_BY(mu_);
  absl::Time last_sweep_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool outage_ ABSL_GUARDED_BY(mu_) = false;

  std::atomic<uint64_t> uploads_{0};
  std::atomic<uint64_t> upload_failures_{0};
  std::atomic<uint64_t> cold_reads_{0};
  std::atomic<uint64_t> expired_segments_{0};
};

}  // namespace keel::durable

#endif  // KEEL_DRIVERS_DURABLE_COLD_TIER_H_
