#include "drivers/durable/durable_bus.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/driver_base.h"
#include "core/errors.h"
#include "core/status_macros.h"
#include "drivers/durable/epoch_history.h"
#include "drivers/durable/group_commit.h"
#include "drivers/durable/head_checkpoints.h"
#include "drivers/durable/key_layout.h"
#include "drivers/durable/recovery.h"
#include "drivers/durable/runtime_warning.h"
#include "drivers/durable/store_metadata.h"
#include "drivers/durable/tail_verifier.h"

namespace keel {
namespace {

using durable::Head;
using durable::PendingAppend;
using durable::TrimPlan;

class DurableBus final : public DriverBase {
 public:
  DurableBus(std::shared_ptr<StateStore> store, const DurableOptions& options,
             const DriverContext& context, durable::RecoveredState recovered,
             absl::Time first_key_expiry)
      : DriverBase(context, PublishLimits{}),
        store_(std::move(store)),
        options_(options),
        epoch_(recovered.meta.epoch),
        format_(recovered.meta.format),
        epochs_(recovered.meta.epoch, recovered.meta.earlier_epochs,
                std::move(recovered.epoch_starts)),
        committer_(options.max_group_bytes,
                   [this](absl::Span<PendingAppend* const> group) { return Commit(group); }),
        heads_(recovered.heads),
        checkpoints_(options.head_checkpoint_bytes),
        verifier_(*store_, format_, *context.logger, recovered.heads,
                  [this](absl::string_view stream, const Head& head) {
                    MutexLock lock(&heads_mu_);
                    heads_[stream] = head;
                  }),
        next_key_expiry_(absl::ToUnixNanos(first_key_expiry)) {
    InitFanOut();
    if (options_.verify_in_background) verifier_.StartSweep();
    if (options_.sync == SyncMode::kInterval) syncer_ = std::thread([this] { SyncLoop(); });
  }
  ~DurableBus() override { Close().IgnoreError(); }

  // A store that refuses writes (LevelDB, after one failed) leaves the bus
  // serving reads only, until a restart: /readyz says so.
  std::string DegradedReason() const override {
    absl::Status refused = store_->WriteStatus();
    if (refused.ok() || GetErrorKind(refused) == ErrorKind::kClosed) return "";
    return absl::StrCat("the store takes no writes, so publishes fail until a restart: ",
                        refused.message());
  }

  // The open succeeded: a clean Close() may now clear the open marker. A
  // bus that failed to open is closed without clearing it, so the next
  // open still finds the crash this one found.
  void Opened() { opened_ = true; }

  absl::StatusOr<ReplayPage> Replay(const ReplayRequest& request) override;
  absl::StatusOr<StreamInfo> Bounds(absl::string_view stream) override;
  absl::StatusOr<std::vector<StreamInfo>> ListStreams(absl::string_view prefix,
                                                      size_t limit) override;
  uint64_t epoch() const override { return epoch_; }

  bool NeedsTrim() const override;
  absl::Status InitMetadata(std::unique_ptr<MetadataStore> store) {
    return DriverBase::InitMetadata(std::move(store));
  }

 protected:
  absl::StatusOr<std::vector<Receipt>> Append(absl::string_view stream, std::vector<Event> events,
                                              const AppendRequest& request) override;
  // Queued for the group commit's committer thread: returns before the write.
  void AppendAsync(absl::string_view stream, std::vector<Event> events,
                   const AppendRequest& request, PublishDone done) override;
  bool AppendsAsync() const override { return true; }
  absl::StatusOr<TrimReport> TrimRetention(size_t budget) override;
  absl::Status OnClose() override;

 private:
  // What one commit group stages before its single store write.
  struct GroupState {
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
    // Idempotency keys appended by this group: "<stream>\0<key>".
    absl::flat_hash_map<std::string, DedupeHit> keys;
    std::vector<PendingAppend*> appended;
  };

  // One publish with everything its PendingAppend points to.
  struct OwnedAppend {
    OwnedAppend(absl::string_view stream, std::vector<Event> events, const AppendRequest& request)
        : stream(stream), events(std::move(events)), request(request) {}
    std::string stream;
    std::vector<Event> events;
    std::vector<std::string> values;  // Encoded entries, one per event.
    AppendRequest request;
    std::vector<Receipt> receipts;
    PendingAppend append;
  };
  // Checks the stream's tail and encodes the entries (in parallel across
  // publishers, not in the leader); wires `owned.append` to its fields.
  absl::Status PrepareOwned(OwnedAppend& owned);
  static absl::StatusOr<std::vector<Receipt>> Outcome(OwnedAppend& owned, absl::Status status);
  absl::Status Commit(absl::Span<PendingAppend* const> group);
  // Puts the heads `state` must write; returns the group's streams whose
  // heads it leaves unwritten (they lag from now on).
  std::vector<absl::string_view> StageHeads(GroupState& state, bool checkpoint);
  // The group's store write, after a synced barrier when `needs_barrier`.
  absl::Status WriteGroup(const GroupState& state);
  // The stream's head as this group has it so far. A stream the store had
  // no head for is checked for entries first (AdoptHeadless).
  absl::StatusOr<GroupState::Staged*> StagedHead(GroupState& state, absl::string_view stream);
  absl::Status AdoptHeadless(absl::string_view stream, Head& head);
  absl::Status StageAppend(GroupState& state, PendingAppend& append);
  absl::Status StageMaintenance(GroupState& state, PendingAppend& append);
  absl::StatusOr<absl::Time> LastTime(absl::string_view stream, const Head& head);
  absl::StatusOr<uint64_t> TrimStream(absl::string_view stream, const Head& head,
                                      const RetentionLimits& limits, absl::Time now,
                                      uint64_t budget, TrimReport& report);
  bool SyncThisWrite();
  // kInterval: a synced write (a barrier) just made every earlier write
  // durable, so the interval starts again from it.
  void Synced();
  void SyncLoop();
  Head CurrentHead(absl::string_view stream) const;
  StreamInfo InfoOf(absl::string_view stream, const Head& head) const;

  const std::shared_ptr<StateStore> store_;
  const DurableOptions options_;
  const uint64_t epoch_;
  const durable::StoreFormat format_;
  durable::EpochHistory epochs_;
  durable::GroupCommitter committer_;

  mutable Mutex heads_mu_;
  absl::flat_hash_map<std::string, Head> heads_ ABSL_GUARDED_BY(heads_mu_);
  durable::HeadCheckpoints checkpoints_;  // Committing thread only.
  durable::TailVerifier verifier_;        // After heads_: it installs repairs there.
  // Publish time of each stream's last event, kept by the committer alone
  // (times stay non-decreasing per stream); loaded from the store on demand.
  absl::flat_hash_map<std::string, absl::Time> last_time_;
  // Unix nanos of the earliest idempotency-key expiry (NeedsTrim).
  std::atomic<int64_t> next_key_expiry_;

  Mutex sync_mu_;
  absl::Time last_sync_ ABSL_GUARDED_BY(sync_mu_) = absl::InfinitePast();
  bool dirty_ ABSL_GUARDED_BY(sync_mu_) = false;  // Unsynced writes exist.
  bool stopping_ ABSL_GUARDED_BY(sync_mu_) = false;
  bool opened_ = false;  // Set by Opened(), read by OnClose (one thread, in that order).
  std::thread syncer_;
};

Head DurableBus::CurrentHead(absl::string_view stream) const {
  ReaderMutexLock lock(&heads_mu_);
  auto it = heads_.find(stream);
  return it == heads_.end() ? Head{} : it->second;
}

StreamInfo DurableBus::InfoOf(absl::string_view stream, const Head& head) const {
  StreamInfo info;
  info.stream = std::string(stream);
  info.first_sequence = head.first;
  info.last_sequence = head.last();
  info.count = head.count();
  info.bytes = head.bytes;
  info.oldest_time = head.oldest_time;
  info.head = Cursor::For(stream, epoch_, head.last());
  info.earlier_epochs = epochs_.CursorBounds(stream);
  return info;
}

absl::StatusOr<std::vector<Receipt>> DurableBus::Append(absl::string_view stream,
                                                        std::vector<Event> events,
                                                        const AppendRequest& request) {
  OwnedAppend owned(stream, std::move(events), request);
  KEEL_RETURN_IF_ERROR(PrepareOwned(owned));
  return Outcome(owned, committer_.Submit(owned.append));
}

void DurableBus::AppendAsync(absl::string_view stream, std::vector<Event> events,
                             const AppendRequest& request, PublishDone done) {
  auto owned = std::make_unique<OwnedAppend>(stream, std::move(events), request);
  if (absl::Status prepared = PrepareOwned(*owned); !prepared.ok()) return done(prepared);
  OwnedAppend* queued = owned.release();  // Freed by `done` below, once committed.
  queued->append.done = [queued, done = std::move(done)](absl::Status status) {
    std::unique_ptr<OwnedAppend> owned(queued);
    done(Outcome(*owned, std::move(status)));
  };
  committer_.SubmitAsync(queued->append);
}

absl::Status DurableBus::PrepareOwned(OwnedAppend& owned) {
  owned.values.reserve(owned.events.size());
  size_t bytes = 0;
  for (const Event& event : owned.events) {
    owned.values.push_back(durable::EncodeEntry(event, format_));
    bytes += owned.values.back().size();
  }
  owned.append.stream = owned.stream;
  owned.append.events = &owned.events;
  owned.append.values = &owned.values;
  owned.append.bytes = bytes;
  owned.append.request = &owned.request;
  owned.append.receipts = &owned.receipts;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Receipt>> DurableBus::Outcome(OwnedAppend& owned, absl::Status status) {
  KEEL_RETURN_IF_ERROR(owned.append.rejected);
  KEEL_RETURN_IF_ERROR(status);
  return std::move(owned.receipts);
}

absl::StatusOr<DurableBus::GroupState::Staged*> DurableBus::StagedHead(GroupState& state,
                                                                       absl::string_view stream) {
  auto it = state.heads.find(stream);
  if (it != state.heads.end()) return &it->second;
  Head head = CurrentHead(stream);
  const bool unstored = !head.started();
  if (unstored) KEEL_RETURN_IF_ERROR(AdoptHeadless(stream, head));
  GroupState::Staged staged{head, unstored};
  staged.needs_start = epochs_.NeedsStart(stream);
  return &state.heads.emplace(stream, staged).first->second;
}

// A stream's first commit writes its head; later ones do not, until a
// checkpoint. Should a crash lose that first commit but keep a later one
// (LevelDB drops a damaged log block and reads on; nothing orders unsynced
// blocks), entries would be left with no head: recovery would not see the
// stream, and its sequences would start again at 1 over them. So before its
// first commit in this process a stream with no head is looked up in the
// store once, and entries found there are taken in, as a lagging head is
// caught up (VerifyTail).
absl::Status DurableBus::AdoptHeadless(absl::string_view stream, Head& head) {
  Head found = head;
  KEEL_ASSIGN_OR_RETURN(durable::TailRepair repair,
                        durable::VerifyTail(*store_, format_, stream, found));
  if (!repair.changed()) return absl::OkStatus();
  // Written at once, as the verifier writes its repairs: an idempotency key
  // looked up while this group is staged must not find a dropped entry's.
  KEEL_RETURN_IF_ERROR(durable::WriteRepair(*store_, stream, repair, found));
  context().logger->Warn(absl::StrCat("durable: stream '", stream,
                                      "' had entries but no head record (a crash lost its "
                                      "first write); next sequence ",
                                      head.next, " -> ", found.next));
  durable::LogDropped(*context().logger, stream, repair, found);
  head = found;
  return absl::OkStatus();
}

absl::StatusOr<absl::Time> DurableBus::LastTime(absl::string_view stream, const Head& head) {
  if (auto it = last_time_.find(stream); it != last_time_.end()) return it->second;
  absl::Time last = absl::InfinitePast();
  if (head.count() > 0) {
    const std::string key = durable::EntryKey(stream, head.last());
    KEEL_ASSIGN_OR_RETURN(std::string value, store_->Get(key));
    absl::StatusOr<Event> event = durable::DecodeEntry(stream, head.last(), value, format_);
    if (!event.ok()) {
      return absl::DataLossError(
          absl::StrCat("key ", durable::PrintableKey(key), ": ", event.status().message()));
    }
    last = event->time;
  }
  last_time_.emplace(std::string(stream), last);
  return last;
}

absl::Status DurableBus::StageAppend(GroupState& state, PendingAppend& append) {
  // Here, on the committing thread, not where the publish was made: the
  // first publish to a stream since start may read its tail and write a
  // repaired head, and an asynchronous publish's caller must not wait.
  // Before StagedHead, which reads the head a repair installs.
  KEEL_RETURN_IF_ERROR(verifier_.Ensure(append.stream));
  std::vector<Event>& events = *append.events;
  const AppendRequest& request = *append.request;
  KEEL_ASSIGN_OR_RETURN(GroupState::Staged * staged, StagedHead(state, append.stream));
  Head& head = staged->head;
  const absl::Time now = context().clock->Now();
  absl::Status lookup_error;
  auto lookup = [&](absl::string_view key) -> std::optional<DedupeHit> {
    auto staged = state.keys.find(absl::StrCat(append.stream, absl::string_view("\0", 1), key));
    if (staged != state.keys.end()) return staged->second;
    absl::StatusOr<std::optional<DedupeHit>> hit =
        durable::LookupDedupe(*store_, append.stream, key, now);
    if (!hit.ok()) lookup_error.Update(hit.status());
    return hit.ok() ? *hit : std::nullopt;
  };
  KEEL_ASSIGN_OR_RETURN(AppendPlan plan, PlanAppend(events, request, head.last(), lookup));
  KEEL_RETURN_IF_ERROR(lookup_error);
  KEEL_ASSIGN_OR_RETURN(absl::Time last_time, LastTime(append.stream, head));
  if (staged->needs_start && !plan.append.empty()) {
    // In the write that holds the entry, and synced: were that write lost
    // and a later one of the stream kept, a stream with no head would take
    // the later entries in (AdoptHeadless) and start its epoch after them,
    // so cursors of earlier epochs would pass sequences given again. One
    // fsync per stream per epoch.
    state.batch.Put(durable::EpochStartKey(append.stream, epoch_),
                    durable::EncodeEpochStart(head.next));
    state.holds_epoch_start = true;
    staged->needs_start = false;
    staged->start = head.next;
  }
  for (size_t i : plan.append) {
    Event& event = events[i];
    if (event.time < last_time) {
      // The clock stepped back, or a publisher stamped earlier was queued
      // later: keep times non-decreasing within the stream.
      event.time = last_time;
      (*append.values)[i] = durable::EncodeEntry(event, format_);
    }
    last_time = event.time;
    if (head.count() == 0) head.oldest_time = event.time;
    event.sequence = head.next++;
    head.bytes += event.ApproximateSize();
    // The value is not needed after the write: move it, not copy it.
    state.batch.PutOwned(durable::EntryKey(append.stream, event.sequence),
                         std::move((*append.values)[i]));
    if (event.idempotency_key && request.dedupe_window > absl::ZeroDuration()) {
      const DedupeHit hit{event.sequence, event.id};
      const absl::Time expires = event.time + request.dedupe_window;
      durable::StageDedupe(state.batch, append.stream, *event.idempotency_key, hit, expires);
      state.keys.emplace(
          absl::StrCat(append.stream, absl::string_view("\0", 1), *event.idempotency_key), hit);
      int64_t expiry = absl::ToUnixNanos(expires);
      int64_t current = next_key_expiry_.load();
      while (expiry < current && !next_key_expiry_.compare_exchange_weak(current, expiry)) {
      }
    }
  }
  last_time_[append.stream] = last_time;
  *append.receipts = PlannedReceipts(plan, events, append.stream, epoch_);
  if (plan.append.size() != events.size()) {
    // Only the appended events are delivered.
    std::vector<Event> appended;
    for (size_t i : plan.append) appended.push_back(events[i]);
    events = std::move(appended);
  }
  return absl::OkStatus();
}

absl::Status DurableBus::StageMaintenance(GroupState& state, PendingAppend& append) {
  if (append.trim != nullptr) {
    KEEL_ASSIGN_OR_RETURN(GroupState::Staged * staged, StagedHead(state, append.stream));
    KEEL_RETURN_IF_ERROR(durable::ApplyTrim(*store_, format_, state.batch, append.stream,
                                            *append.trim, staged->head));
    staged->trimmed = true;
    return absl::OkStatus();
  }
  KEEL_ASSIGN_OR_RETURN(*append.collect,
                        durable::CollectExpiredKeys(*store_, state.batch, context().clock->Now(),
                                                    append.collect_budget));
  next_key_expiry_.store(absl::ToUnixNanos(append.collect->next_expiry));
  return absl::OkStatus();
}

absl::Status DurableBus::Commit(absl::Span<PendingAppend* const> group) {
  GroupState state;
  // An entry per event and at most a head per member: the records of most
  // groups. Idempotency keys and maintenance add theirs on top, at the cost
  // of a reallocation.
  size_t records = 0;
  for (const PendingAppend* member : group) {
    if (member->events != nullptr) records += member->events->size() + 1;
  }
  state.batch.Reserve(records);
  bool checkpoint = false;
  // Maintenance first: its deletions then precede this group's new records
  // in the batch, so a key collected and published again in one group stays.
  for (PendingAppend* member : group) {
    checkpoint = checkpoint || member->checkpoint;
    if (member->trim != nullptr || member->collect != nullptr) {
      member->rejected = StageMaintenance(state, *member);
    }
  }
  for (PendingAppend* member : group) {
    if (member->events == nullptr) continue;
    member->rejected = StageAppend(state, *member);
    if (member->rejected.ok()) state.appended.push_back(member);
  }
  const uint64_t batch_bytes = state.batch.ApproximateBytes();
  checkpoint = checkpoint || checkpoints_.Due(batch_bytes);
  const std::vector<absl::string_view> unwritten = StageHeads(state, checkpoint);
  if (absl::Status status = WriteGroup(state); !status.ok()) {
    for (PendingAppend* append : state.appended) {
      for (Event& event : *append->events) event.sequence = 0;
    }
    last_time_.clear();  // Times staged above were never stored.
    return status;
  }
  {
    MutexLock lock(&heads_mu_);
    for (const auto& [stream, staged] : state.heads) {
      if (staged.head.started()) heads_[stream] = staged.head;  // Else, as before: no stream.
      if (staged.start != 0) epochs_.Started(stream, staged.start);
    }
  }
  checkpoints_.Committed(checkpoint, unwritten, batch_bytes);
  // Still the only committer: deliveries leave in sequence order per stream.
  for (PendingAppend* append : state.appended) {
    fanout().Deliver(append->stream, *append->events);
  }
  return absl::OkStatus();
}

absl::Status DurableBus::WriteGroup(const GroupState& state) {
  if (state.batch.size() == 0) return absl::OkStatus();  // Nothing staged, nothing to sync.
  if (state.needs_barrier && options_.sync != SyncMode::kAlways) {
    // Some head staged here accounts for entries of earlier, unsynced
    // writes. Those reach the disk first: LevelDB may keep a later log block
    // and lose an earlier one, and a head must never outlive any of its
    // entries (a hole below a head would be read past without a signal).
    KEEL_RETURN_IF_ERROR(store_->Write(WriteBatch(), WriteOptions{.sync = true}));
    if (options_.sync == SyncMode::kInterval) Synced();  // The interval restarts here.
  }
  const absl::Time start = absl::Now();
  const bool sync = state.holds_epoch_start || SyncThisWrite();
  absl::Status status = store_->Write(state.batch, WriteOptions{.sync = sync});
  if (status.ok() && state.holds_epoch_start && options_.sync == SyncMode::kInterval) Synced();
  if (context().on_store_write) context().on_store_write(absl::Now() - start);
  return status;
}

std::vector<absl::string_view> DurableBus::StageHeads(GroupState& state, bool checkpoint) {
  std::vector<absl::string_view> unwritten;
  for (const auto& [stream, staged] : state.heads) {
    if (!staged.head.started()) continue;  // Nothing appended (a refused first publish).
    if (checkpoint || staged.unstored || staged.trimmed) {
      state.batch.Put(durable::HeadKey(stream), EncodeHead(staged.head));
      // A stored head lags: this one accounts for earlier writes' entries too.
      if (!staged.unstored) state.needs_barrier = true;
    } else {
      unwritten.push_back(stream);
    }
  }
  if (!checkpoint) return unwritten;
  for (const std::string& stream : checkpoints_.lagging()) {
    if (state.heads.contains(stream)) continue;
    state.batch.Put(durable::HeadKey(stream), EncodeHead(CurrentHead(stream)));
    state.needs_barrier = true;
  }
  return unwritten;
}

void DurableBus::Synced() {
  MutexLock lock(&sync_mu_);
  last_sync_ = absl::Now();
  dirty_ = false;
}

bool DurableBus::SyncThisWrite() {
  switch (options_.sync) {
    case SyncMode::kAlways:
      return true;
    case SyncMode::kNone:
      return false;
    case SyncMode::kInterval:
      break;
  }
  MutexLock lock(&sync_mu_);
  absl::Time now = absl::Now();
  if (now - last_sync_ >= options_.sync_interval) {
    last_sync_ = now;
    dirty_ = false;
    return true;
  }
  dirty_ = true;
  return false;
}

// kInterval: makes sure unsynced writes reach the disk within one interval
// even when no further publish comes to carry the sync.
void DurableBus::SyncLoop() {
  MutexLock lock(&sync_mu_);
  while (!stopping_) {
    sync_mu_.AwaitWithTimeout([this]()
                                  ABSL_EXCLUSIVE_LOCKS_REQUIRED(sync_mu_) { return stopping_; },
                              options_.sync_interval);
    if (!dirty_ || absl::Now() - last_sync_ < options_.sync_interval) continue;
    dirty_ = false;
    last_sync_ = absl::Now();
    sync_mu_.Unlock();
    absl::Status status = store_->Write(WriteBatch(), WriteOptions{.sync = true});
    if (!status.ok())
      context().logger->Error(absl::StrCat("durable: periodic sync failed: ", status.ToString()));
    sync_mu_.Lock();
  }
}

absl::StatusOr<StreamInfo> DurableBus::Bounds(absl::string_view stream) {
  KEEL_RETURN_IF_ERROR(ValidateStreamName(stream));
  KEEL_RETURN_IF_ERROR(verifier_.Ensure(stream));
  return InfoOf(stream, CurrentHead(stream));
}

absl::StatusOr<ReplayPage> DurableBus::Replay(const ReplayRequest& request) {
  KEEL_RETURN_IF_ERROR(ValidateReplayRequest(request));
  KEEL_RETURN_IF_ERROR(verifier_.Ensure(request.stream));
  StreamInfo info = InfoOf(request.stream, CurrentHead(request.stream));
  KEEL_ASSIGN_OR_RETURN(uint64_t after, ResolvePosition(request.after, info, epoch_));
  KEEL_ASSIGN_OR_RETURN(uint64_t end, ResolveUntil(request, info, epoch_));

  ReplayPage page;
  page.head_sequence = info.last_sequence;
  uint64_t scanned = after;
  if (after < end) {
    std::unique_ptr<StoreIterator> it = store_->NewIterator(KeyRange{
        durable::EntryKey(request.stream, after + 1), durable::EntryKey(request.stream, end + 1)});
    // Events are decoded in place: moving each into the page cost a tenth
    // of a replay. A filtered read may keep few of them: no reserve then.
    if (request.filter.empty()) page.events.reserve(std::min<uint64_t>(request.limit, end - after));
    for (it->Seek(durable::EntryKey(request.stream, after + 1));
         it->Valid() && page.events.size() < request.limit; it->Next()) {
      KEEL_ASSIGN_OR_RETURN(uint64_t seq, durable::EntrySequence(it->key()));
      Event& event = page.events.emplace_back();
      absl::Status decoded =
          durable::DecodeEntryInto(request.stream, seq, it->value(), format_, event);
      if (!decoded.ok()) {
        return absl::DataLossError(
            absl::StrCat("key ", durable::PrintableKey(it->key()), ": ", decoded.message()));
      }
      scanned = seq;
      if (!request.filter.Matches(event)) page.events.pop_back();
    }
    KEEL_RETURN_IF_ERROR(it->status());
  }
  page.next = Cursor::For(request.stream, epoch_, scanned);
  page.reached_end = scanned >= end;
  return page;
}

absl::StatusOr<std::vector<StreamInfo>> DurableBus::ListStreams(absl::string_view prefix,
                                                                size_t limit) {
  std::vector<StreamInfo> infos;
  {
    ReaderMutexLock lock(&heads_mu_);
    for (const auto& [stream, head] : heads_) {
      if (absl::StartsWith(stream, prefix)) infos.push_back(InfoOf(stream, head));
    }
  }
  std::sort(infos.begin(), infos.end(),
            [](const StreamInfo& a, const StreamInfo& b) { return a.stream < b.stream; });
  if (infos.size() > limit) infos.resize(limit);
  // A head read at open may lag its entries until its stream is verified
  // (after a crash, by up to a head checkpoint); verify what is listed. Once
  // every stream is verified this is one atomic load each. A stream that
  // fails verification is listed as read: its own operations report that.
  for (StreamInfo& info : infos) {
    if (verifier_.Ensure(info.stream).ok()) info = InfoOf(info.stream, CurrentHead(info.stream));
  }
  return infos;
}

absl::StatusOr<uint64_t> DurableBus::TrimStream(absl::string_view stream, const Head& head,
                                                const RetentionLimits& limits, absl::Time now,
                                                uint64_t budget, TrimReport& report) {
  KEEL_RETURN_IF_ERROR(verifier_.Ensure(stream));
  KEEL_ASSIGN_OR_RETURN(durable::TrimPlan plan,
                        durable::PlanTrim(*store_, format_, stream, head, limits, now, budget));
  if (plan.events() == 0) return 0;
  PendingAppend op;
  op.stream = stream;
  op.trim = &plan;
  absl::Status status = committer_.Submit(op);
  if (op.rejected.code() == absl::StatusCode::kAborted) return 0;  // Raced; next pass.
  KEEL_RETURN_IF_ERROR(op.rejected);
  KEEL_RETURN_IF_ERROR(status);
  report.events += plan.events();
  report.bytes += plan.bytes;
  return plan.events();
}

absl::StatusOr<TrimReport> DurableBus::TrimRetention(size_t budget) {
  TrimReport report;
  const absl::Time now = context().clock->Now();
  std::vector<std::pair<std::string, Head>> over;
  {
    ReaderMutexLock lock(&heads_mu_);
    for (const auto& [stream, head] : heads_) {
      if (policies().PolicyOf(stream).retention.Exceeded(head.count(), head.bytes, head.oldest_time,
                                                         now)) {
        over.emplace_back(stream, head);
      }
    }
  }
  for (const auto& [stream, head] : over) {
    if (report.events >= budget) {
      report.more = true;
      return report;
    }
    KEEL_RETURN_IF_ERROR(TrimStream(stream, head, policies().PolicyOf(stream).retention, now,
                                    budget - report.events, report)
                             .status());
  }
  if (absl::FromUnixNanos(next_key_expiry_.load()) <= now) {
    durable::DedupeCollection collection;
    PendingAppend op;
    op.collect = &collection;
    op.collect_budget = budget;
    absl::Status status = committer_.Submit(op);
    KEEL_RETURN_IF_ERROR(op.rejected);
    KEEL_RETURN_IF_ERROR(status);
    report.dedupe_keys = collection.collected;
    report.more = report.more || collection.next_expiry <= now;
  }
  // A stream trimmed up to the budget may still be over its bound.
  report.more = report.more || report.events >= budget;
  return report;
}

bool DurableBus::NeedsTrim() const {
  const absl::Time now = context().clock->Now();
  if (absl::FromUnixNanos(next_key_expiry_.load()) <= now) return true;
  ReaderMutexLock lock(&heads_mu_);
  for (const auto& [stream, head] : heads_) {
    if (policies().PolicyOf(stream).retention.Exceeded(head.count(), head.bytes, head.oldest_time,
                                                       now)) {
      return true;
    }
  }
  return false;
}

absl::Status DurableBus::OnClose() {
  verifier_.Stop();
  {
    MutexLock lock(&sync_mu_);
    stopping_ = true;
  }
  if (syncer_.joinable()) syncer_.join();
  // Every head written, so that the next open reads no entries to catch one up.
  PendingAppend checkpoint;
  checkpoint.checkpoint = true;
  absl::Status status = committer_.Submit(checkpoint);
  // The last write flushes everything (under interval or none) and, only
  // when everything else worked, tells the next open that the store was
  // closed cleanly.
  WriteBatch last;
  if (status.ok() && opened_) last.Delete(durable::OpenMarkerKey());
  if (!last.empty() || options_.sync != SyncMode::kAlways) {
    status.Update(store_->Write(last, WriteOptions{.sync = true}));
  }
  if (options_.close_store) status.Update(store_->Close());
  return status;
}

}  // namespace

absl::StatusOr<DurableOptions> DurableOptionsFromConfig(const Config& config) {
  DurableOptions options;
  const std::string sync = config.GetString("sync", "always");
  if (sync == "always") {
    options.sync = SyncMode::kAlways;
  } else if (sync == "interval") {
    options.sync = SyncMode::kInterval;
  } else if (sync == "none") {
    options.sync = SyncMode::kNone;
  } else {
    return InvalidArgument(
        absl::StrCat("option 'sync': '", sync, "' is not one of always, interval, none"));
  }
  KEEL_ASSIGN_OR_RETURN(options.sync_interval,
                        config.GetDuration("sync_interval", options.sync_interval));
  KEEL_ASSIGN_OR_RETURN(options.max_group_bytes,
                        config.GetUint("max_group_bytes", options.max_group_bytes, 1));
  KEEL_ASSIGN_OR_RETURN(options.head_checkpoint_bytes,
                        config.GetUint("head_checkpoint_bytes", options.head_checkpoint_bytes, 0));
  return options;
}

absl::StatusOr<std::unique_ptr<EventBus>> OpenDurableBus(std::shared_ptr<StateStore> store,
                                                         const DurableOptions& options,
                                                         const DriverContext& context) {
  KEEL_ASSIGN_OR_RETURN(durable::RecoveredState recovered, durable::Recover(*store));
  KEEL_ASSIGN_OR_RETURN(std::optional<durable::OpenMarker> unclean,
                        durable::ReadOpenMarker(*store));
  const std::string lifetime = store->UnsyncedWritesLifetime();
  const bool lost = unclean && durable::MayHaveLostAcknowledgedWrites(*unclean, lifetime);
  // Loudly, and first in the log: whatever fails below, this was said.
  const std::string unclean_message = unclean ? durable::UncleanOpenMessage(*unclean, lost) : "";
  if (unclean) context.logger->Warn(absl::StrCat("durable: ", unclean_message));
  // The open's one write: this process's marker, and a new epoch when the
  // last process may have lost acknowledged events.
  WriteBatch open;
  durable::StageOpenMarker(options.sync == SyncMode::kAlways, lifetime, unclean, lost, open);
  if (lost) durable::StageNewEpoch(recovered, open);
  KEEL_RETURN_IF_ERROR(store->Write(open, WriteOptions{.sync = true}));
  KEEL_ASSIGN_OR_RETURN(absl::Time first_key_expiry, durable::FirstExpiry(*store));
  auto bus =
      std::make_unique<DurableBus>(store, options, context, std::move(recovered), first_key_expiry);
  KEEL_RETURN_IF_ERROR(bus->InitMetadata(durable::NewStoreMetadata(std::move(store))));
  if (unclean) {  // Also on the bus, for whoever follows keel.runtime; the log has it anyway.
    absl::Status published = bus->Publish(durable::RuntimeWarning(unclean_message)).status();
    if (!published.ok()) {
      context.logger->Error(
          absl::StrCat("durable: cannot publish the unclean-shutdown warning "
                       "to keel.runtime: ",
                       published.ToString()));
    }
  }
  bus->Opened();
  return bus;
}

}  // namespace keel
