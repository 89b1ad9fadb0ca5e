// DurableLog: the durable driver's storage (core/stream_log.h) in a
// StateStore, LevelDB by default. Layout: rfcs/0003-durable-layout.md.
//
// Each event is one immutable entry record; each stream has one small head
// record, written with its first events and then at head checkpoints, never
// ahead of the entries (head_checkpoints.h). One Append is one store write
// (synced under SyncMode::kAlways), holding the group's entries, their
// idempotency records, the heads it must write and, in a store with earlier
// epochs, each stream's first sequence in this epoch (epoch_history.h).
//
// Heads are read at open (recovery.h) and each is checked against its
// stream's last entry once, lazily (tail_verifier.h): a stream's Bounds
// first waits for that. A stream that has entries but no head (a crash
// lost its first write and kept a later one) is taken in by the first
// Bounds that finds it headless, before any sequence is given to it.
//
// With a cold store (DurableOptions::cold) the head's range is the hot
// window; older events are in cold segments (cold_tier.h), which Bounds
// counts in and Read reads transparently, in order, before the hot ones.
//
// Thread safety: as StreamLog requires. Tiering (Tier, on the trimmer's
// thread) changes heads only under the commit lock that Append and
// TrimPrefix hold.
#ifndef KEEL_DRIVERS_DURABLE_DURABLE_LOG_H_
#define KEEL_DRIVERS_DURABLE_DURABLE_LOG_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "keel/core/driver_factory.h"
#include "keel/core/mutex.h"
#include "keel/core/stream_log.h"
#include "keel/drivers/durable/cold_tier.h"
#include "keel/drivers/durable/durable_bus.h"
#include "keel/drivers/durable/epoch_history.h"
#include "keel/drivers/durable/head_checkpoints.h"
#include "keel/drivers/durable/key_layout.h"
#include "keel/drivers/durable/recovery.h"
#include "keel/drivers/durable/tail_verifier.h"
#include "keel/statestore/state_store.h"

namespace keel::durable {

class DurableLog final : public StreamLog, private TierHost {
 public:
  DurableLog(std::shared_ptr<StateStore> store, const DurableOptions& options,
             const DriverContext& context, RecoveredState recovered, ColdRecords cold = {});
  ~DurableLog() override;

  // The open succeeded: Close() may now clear the open marker. A log that
  // failed to open is closed without clearing it, so the next open still
  // finds the crash this one found.
  void Opened() { opened_ = true; }

  uint64_t epoch() const override { return epoch_; }
  absl::StatusOr<LogBounds> Bounds(absl::string_view stream) override;
  absl::StatusOr<std::vector<std::pair<std::string, LogBounds>>> List(absl::string_view prefix,
                                                                      size_t limit) override;
  absl::Status Read(absl::string_view stream, uint64_t from, uint64_t to, ReadSink& sink) override;
  absl::Status Append(absl::Span<const LogAppend> group) override;
  absl::Status TrimPrefix(absl::string_view stream, const LogTrim& cut) override;
  bool DeletesStreams() const override { return true; }
  absl::Status DeleteStream(absl::string_view stream) override;
  absl::StatusOr<bool> SweepDeleted(absl::string_view stream, size_t budget) override;
  absl::Status Close() override;
  std::unique_ptr<PreparedRecords> Prepare(absl::Span<const Event> events) override;

  bool KeepsKeys() const override { return true; }
  absl::StatusOr<std::optional<DedupeHit>> FindKey(absl::string_view stream, absl::string_view key,
                                                   absl::Time now) override;
  absl::StatusOr<KeyCollection> CollectKeys(absl::Time now, size_t budget) override;
  absl::StatusOr<absl::Time> NextKeyExpiry() override;

  std::vector<EarlierEpoch> EarlierEpochs(absl::string_view stream) const override {
    return epochs_.CursorBounds(stream);
  }
  std::unique_ptr<MetadataStore> TakeMetadataStore() override;
  bool StoresRecords() const override { return true; }
  bool AppendsMayBlock() const override { return true; }
  std::string DegradedReason() const override;

  // The cold tier (null without a cold store).
  ColdTier* cold() { return cold_.get(); }
  // Where the stream's events are: its hot window's first sequence and its
  // live segments (none without a cold store). Checks the stream as Bounds.
  absl::StatusOr<StreamTiers> TiersOf(absl::string_view stream);
  // One tiering pass over the streams whose hot bound `hot_of` gives.
  absl::StatusOr<TierReport> Tier(const std::function<RetentionLimits(absl::string_view)>& hot_of,
                                  absl::Time now, uint64_t budget);
  // Whether Tier has work: a stream over its hot bound, or recovery or
  // expiry under way. No I/O.
  bool NeedsTier(const std::function<RetentionLimits(absl::string_view)>& hot_of,
                 absl::Time now) const;

 private:
  // TierHost.
  absl::StatusOr<Head> HotHead(absl::string_view stream) override;
  uint64_t EpochEnd(absl::string_view stream, uint64_t sequence) const override {
    return epochs_.SpanOf(stream, sequence).end;
  }
  uint64_t EpochOf(absl::string_view stream, uint64_t sequence) const override {
    return epochs_.SpanOf(stream, sequence).epoch;
  }
  absl::Status CommitTiered(absl::string_view stream, const ColdSegment& segment) override;
  // Retention reaching cold segments: they expire whole (TrimPrefix).
  absl::Status TrimWithCold(absl::string_view stream, const LogTrim& cut);
  // The stream's bounds, its cold segments counted in.
  LogBounds TotalBounds(absl::string_view stream, const Head& head) const;
  // The time of hot entry `sequence`, for a head whose first moves to it.
  absl::StatusOr<absl::Time> EntryTime(absl::string_view stream, uint64_t sequence);

  // What one store write stages.
  struct GroupState {
    // Empties it for the next group, keeping its memory.
    void Clear();

    WriteBatch batch;
    struct Staged {
      Head head;
      bool unstored;         // The store had no head for the stream: this one is written.
      bool trimmed = false;  // A trim moved its first sequence: this one is written.
      // The stream's start in this epoch: still to be staged (needs_start),
      // or staged here at `start` (0: not by this group).
      bool needs_start = false;
      uint64_t start = 0;
    };
    absl::flat_hash_map<absl::string_view, Staged> heads;
    // A head is staged that accounts for entries of earlier writes (any but
    // a stream's first): those must be on disk first. Set by StageHeads.
    bool needs_barrier = false;
    // An epoch start is staged: the write is synced whatever the mode
    // (StageAppend says why).
    bool holds_epoch_start = false;
    bool new_stream = false;  // A stream gets its first head.
    // Streams whose staged head is not written (StageHeads).
    std::vector<absl::string_view> unwritten;
  };

  // The stream's head; for one with none, a deleted stream's incarnation
  // (first = next = start + 1) or a never-written one's.
  Head CurrentHead(absl::string_view stream) const;
  Head CurrentHeadLocked(absl::string_view stream) const ABSL_SHARED_LOCKS_REQUIRED(heads_mu_);
  bool Headless(absl::string_view stream) const;
  uint64_t IncarnationStart(absl::string_view stream) const;
  LogBounds BoundsOf(absl::string_view stream, const Head& head) const;
  absl::Status AdoptHeadless(absl::string_view stream);
  GroupState::Staged& StagedHead(GroupState& state, absl::string_view stream);
  absl::Status StageAppend(GroupState& state, const LogAppend& part);
  // Deletes of the records appends to a deleted stream stored (SweepDeleted).
  absl::Status StageStreamRecordDeletes(absl::string_view stream, size_t budget, WriteBatch& batch);
  // Stages the heads `state` must write, writes it and installs its heads.
  absl::Status Commit(GroupState& state, bool checkpoint);
  // Puts the heads `state` must write, and lists in state.unwritten the
  // streams whose heads it leaves unwritten (they lag from now on).
  void StageHeads(GroupState& state, bool checkpoint);
  // The store write, after a synced barrier when `needs_barrier`.
  absl::Status WriteGroup(const GroupState& state);
  bool SyncThisWrite();
  // kInterval: a synced write (a barrier) just made every earlier write
  // durable, so the interval starts again from it.
  void Synced();
  void SyncLoop();

  const std::shared_ptr<StateStore> store_;
  const DurableOptions options_;
  const DriverContext context_;
  const uint64_t epoch_;
  const StoreFormat format_;
  EpochHistory epochs_;

  mutable Mutex heads_mu_;
  absl::flat_hash_map<std::string, Head> heads_ ABSL_GUARDED_BY(heads_mu_);
  // Streams AdoptHeadless took in whose next commit writes their head, as
  // a stream's first commit does.
  absl::flat_hash_set<std::string> adopted_ ABSL_GUARDED_BY(heads_mu_);
  // Where each deleted stream's current incarnation starts (its record).
  absl::flat_hash_map<std::string, uint64_t> incarnations_ ABSL_GUARDED_BY(heads_mu_);
  // Held while a stream goes from no head to a head (its first commit, or
  // AdoptHeadless), so that a headless stream is looked up in the store
  // only while no commit of it is under way.
  Mutex adopt_mu_;
  HeadCheckpoints checkpoints_;  // Committing thread only.
  TailVerifier verifier_;        // After heads_: it installs repairs there.

  Mutex sync_mu_;
  absl::Time last_sync_ ABSL_GUARDED_BY(sync_mu_) = absl::InfinitePast();
  bool dirty_ ABSL_GUARDED_BY(sync_mu_) = false;  // Unsynced writes exist.
  bool stopping_ ABSL_GUARDED_BY(sync_mu_) = false;
  bool opened_ = false;  // Set by Opened(), read by Close (one thread, in that order).
  std::thread syncer_;

  // Held by every write that moves a head: the committer's (Append,
  // TrimPrefix, Close) and tiering's last step.
  Mutex commit_mu_;
  // Append's, reused by every group: a group then allocates nothing for
  // its batch's list or its heads.
  GroupState append_state_ ABSL_GUARDED_BY(commit_mu_);
  std::unique_ptr<ColdTier> cold_;  // After the rest: it calls back into this log.
};

}  // namespace keel::durable

#endif  // KEEL_DRIVERS_DURABLE_DURABLE_LOG_H_
