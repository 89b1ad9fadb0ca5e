#include "keel/drivers/durable/durable_log.h"

#include <algorithm>

#include "absl/container/inlined_vector.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "keel/core/commit_hook.h"
#include "keel/core/errors.h"
#include "keel/core/publish_validation.h"
#include "keel/core/status_macros.h"
#include "keel/drivers/durable/dedupe_index.h"
#include "keel/drivers/durable/store_metadata.h"
#include "keel/drivers/durable/trim.h"

namespace keel::durable {
namespace {

// Entries encoded on the publisher's thread: the committer only moves them
// into its batch.
struct PreparedEntries final : PreparedRecords {
  // One per event, in order; a single event's inline.
  absl::InlinedVector<std::string, 1> values;
};

}  // namespace

DurableLog::DurableLog(std::shared_ptr<StateStore> store, const DurableOptions& options,
                       const DriverContext& context, RecoveredState recovered, ColdRecords cold)
    : store_(std::move(store)),
      options_(options),
      context_(context),
      epoch_(recovered.meta.epoch),
      format_(recovered.meta.format),
      epochs_(recovered.meta.epoch, recovered.meta.earlier_epochs,
              std::move(recovered.epoch_starts)),
      heads_(recovered.heads),
      incarnations_(std::move(recovered.incarnations)),
      checkpoints_(options.head_checkpoint_bytes),
      verifier_(*store_, format_, *context.logger, recovered.heads,
                [this](absl::string_view stream, const Head& head) {
                  MutexLock lock(&heads_mu_);
                  heads_[stream] = head;
                }) {
  if (options_.cold.store) {
    TierHost& host = *this;
    cold_ = std::make_unique<ColdTier>(*store_, format_, options_.cold, *context_.logger, host,
                                       std::move(cold));
  }
  if (options_.verify_in_background) verifier_.StartSweep();
  if (options_.sync == SyncMode::kInterval) syncer_ = std::thread([this] { SyncLoop(); });
}

DurableLog::~DurableLog() {
  verifier_.Stop();
  {
    MutexLock lock(&sync_mu_);
    stopping_ = true;
  }
  if (syncer_.joinable()) syncer_.join();
}

// A store that refuses writes (LevelDB, after one failed) leaves the bus
// serving reads only, until a restart: /readyz says so.
std::string DurableLog::DegradedReason() const {
  absl::Status refused = store_->WriteStatus();
  if (refused.ok() || GetErrorKind(refused) == ErrorKind::kClosed) return "";
  return absl::StrCat("the store takes no writes, so publishes fail until a restart: ",
                      refused.message());
}

std::unique_ptr<MetadataStore> DurableLog::TakeMetadataStore() { return NewStoreMetadata(store_); }

Head DurableLog::CurrentHead(absl::string_view stream) const {
  ReaderMutexLock lock(&heads_mu_);
  return CurrentHeadLocked(stream);
}

Head DurableLog::CurrentHeadLocked(absl::string_view stream) const {
  if (auto it = heads_.find(stream); it != heads_.end()) return it->second;
  auto deleted = incarnations_.find(stream);
  if (deleted == incarnations_.end()) return Head{};
  return Head{.first = deleted->second + 1, .next = deleted->second + 1};
}

bool DurableLog::Headless(absl::string_view stream) const {
  ReaderMutexLock lock(&heads_mu_);
  return !heads_.contains(stream);
}

uint64_t DurableLog::IncarnationStart(absl::string_view stream) const {
  ReaderMutexLock lock(&heads_mu_);
  auto it = incarnations_.find(stream);
  return it == incarnations_.end() ? 0 : it->second;
}

LogBounds DurableLog::BoundsOf(absl::string_view stream, const Head& head) const {
  return LogBounds{head.first, head.next, head.bytes, head.oldest_time, IncarnationStart(stream)};
}

absl::StatusOr<LogBounds> DurableLog::Bounds(absl::string_view stream) {
  KEEL_RETURN_IF_ERROR(verifier_.Ensure(stream));
  if (Headless(stream)) KEEL_RETURN_IF_ERROR(AdoptHeadless(stream));
  return TotalBounds(stream, CurrentHead(stream));
}

absl::StatusOr<StreamTiers> DurableLog::TiersOf(absl::string_view stream) {
  KEEL_RETURN_IF_ERROR(ValidateStreamName(stream));
  KEEL_RETURN_IF_ERROR(verifier_.Ensure(stream));
  Head head = CurrentHead(stream);
  if (!head.started()) {
    KEEL_RETURN_IF_ERROR(AdoptHeadless(stream));
    head = CurrentHead(stream);
  }
  StreamTiers tiers;
  tiers.hot_first_sequence = head.first;
  if (cold_ == nullptr) return tiers;
  const ColdSummary cold = cold_->SummaryOf(stream);
  if (cold.empty()) return tiers;
  tiers.cold_first_sequence = cold.first;
  tiers.cold_segments = cold.segments;
  tiers.cold_bytes = cold.object_bytes;
  return tiers;
}

LogBounds DurableLog::TotalBounds(absl::string_view stream, const Head& head) const {
  LogBounds bounds = BoundsOf(stream, head);
  if (cold_ == nullptr) return bounds;
  const ColdSummary cold = cold_->SummaryOf(stream);
  if (cold.empty()) return bounds;
  bounds.first = cold.first;
  bounds.bytes += cold.event_bytes;
  bounds.oldest_time = cold.oldest_time;
  return bounds;
}

// A stream's first commit writes its head; later ones do not, until a
// checkpoint. Should a crash lose that first commit but keep a later one
// (LevelDB drops a damaged log block and reads on; nothing orders unsynced
// blocks), entries would be left with no head: recovery would not see the
// stream, and its sequences would start again at 1 over them. So before a
// headless stream is given a sequence it is looked up in the store, and
// entries found there are taken in, as a lagging head is caught up
// (VerifyTail).
absl::Status DurableLog::AdoptHeadless(absl::string_view stream) {
  MutexLock adopting(&adopt_mu_);
  if (!Headless(stream)) return absl::OkStatus();  // Adopted or committed meanwhile.
  Head found = CurrentHead(stream);
  const uint64_t next = found.next;
  KEEL_ASSIGN_OR_RETURN(TailRepair repair, VerifyTail(*store_, format_, stream, found));
  if (!repair.changed()) return absl::OkStatus();
  // Written at once, as the verifier writes its repairs: an idempotency key
  // looked up after this must not find a dropped entry's.
  KEEL_RETURN_IF_ERROR(WriteRepair(*store_, stream, repair, found));
  context_.logger->Warn(absl::StrCat("durable: stream '", stream,
                                     "' had entries but no head record (a crash lost its "
                                     "first write); next sequence ",
                                     next, " -> ", found.next));
  LogDropped(*context_.logger, stream, repair, found);
  MutexLock lock(&heads_mu_);
  heads_[stream] = found;
  adopted_.emplace(stream);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::pair<std::string, LogBounds>>> DurableLog::List(
    absl::string_view prefix, size_t limit) {
  std::vector<std::pair<std::string, LogBounds>> listed;
  {
    ReaderMutexLock lock(&heads_mu_);
    for (const auto& [stream, head] : heads_) {
      if (absl::StartsWith(stream, prefix)) listed.emplace_back(stream, TotalBounds(stream, head));
    }
  }
  std::sort(listed.begin(), listed.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  if (listed.size() > limit) listed.resize(limit);
  // A head read at open may lag its entries until its stream is verified
  // (after a crash, by up to a head checkpoint); verify what is listed. Once
  // every stream is verified this is one atomic load each. A stream that
  // fails verification is listed as read: its own operations report that.
  for (auto& [stream, bounds] : listed) {
    if (verifier_.Ensure(stream).ok()) bounds = TotalBounds(stream, CurrentHead(stream));
  }
  return listed;
}

// Cold segments first, then hot entries. Tiering makes a segment live
// before the head moves past its entries, and this reads the head before
// the segments, so every event below the hot window it read is in a
// segment it finds; a hot read that finds its first entry gone (tiered or
// trimmed meanwhile) starts again below the new head.
absl::Status DurableLog::Read(absl::string_view stream, uint64_t from, uint64_t to,
                              ReadSink& sink) {
  uint64_t seq = from;
  while (seq <= to) {
    if (cold_ != nullptr) {
      bool stopped = false;
      for (uint64_t hot_first = CurrentHead(stream).first; seq <= to && seq < hot_first;
           hot_first = CurrentHead(stream).first) {
        KEEL_ASSIGN_OR_RETURN(seq, cold_->ReadFrom(stream, seq, to, hot_first, sink, stopped));
        if (stopped) return absl::OkStatus();
      }
      if (seq > to) return absl::OkStatus();
    }
    std::unique_ptr<StoreIterator> it =
        store_->NewIterator(KeyRange{EntryKey(stream, seq), EntryKey(stream, to + 1)});
    bool moved = false;
    bool any = false;
    for (it->Seek(EntryKey(stream, seq)); it->Valid(); it->Next()) {
      KEEL_ASSIGN_OR_RETURN(uint64_t found, EntrySequence(it->key()));
      if (!any && found != seq && cold_ != nullptr && CurrentHead(stream).first > seq) {
        moved = true;
        break;
      }
      any = true;
      absl::Status decoded = DecodeEntryInto(stream, found, it->value(), format_, sink.Slot());
      if (!decoded.ok()) {
        return absl::DataLossError(
            absl::StrCat("key ", PrintableKey(it->key()), ": ", decoded.message()));
      }
      if (!sink.Take()) break;
    }
    KEEL_RETURN_IF_ERROR(it->status());
    if (!moved && !(!any && cold_ != nullptr && CurrentHead(stream).first > seq)) break;
  }
  return absl::OkStatus();
}

std::unique_ptr<PreparedRecords> DurableLog::Prepare(absl::Span<const Event> events) {
  auto prepared = std::make_unique<PreparedEntries>();
  prepared->values.reserve(events.size());
  for (const Event& event : events) prepared->values.push_back(EncodeEntry(event, format_));
  return prepared;
}

DurableLog::GroupState::Staged& DurableLog::StagedHead(GroupState& state,
                                                       absl::string_view stream) {
  auto it = state.heads.find(stream);
  if (it != state.heads.end()) return it->second;
  Head head;
  bool adopted = false;
  bool stored = false;
  {
    MutexLock lock(&heads_mu_);
    head = CurrentHeadLocked(stream);
    stored = heads_.contains(stream);
    adopted = adopted_.erase(stream) > 0;
  }
  GroupState::Staged staged{head, !stored || adopted};
  staged.needs_start = epochs_.NeedsStart(stream);
  state.new_stream = state.new_stream || staged.unstored;
  return state.heads.emplace(stream, staged).first->second;
}

absl::Status DurableLog::StageAppend(GroupState& state, const LogAppend& part) {
  if (part.events.empty()) return absl::OkStatus();
  GroupState::Staged& staged = StagedHead(state, part.stream);
  Head& head = staged.head;
  if (part.events.front().sequence != head.next) {
    return absl::InternalError(absl::StrCat("stream '", part.stream, "': append at sequence ",
                                            part.events.front().sequence, ", expected ",
                                            head.next));
  }
  if (staged.needs_start) {
    // In the write that holds the entry, and synced: were that write lost
    // and a later one of the stream kept, a stream with no head would take
    // the later entries in (AdoptHeadless) and start its epoch after them,
    // so cursors of earlier epochs would pass sequences given again. One
    // fsync per stream per epoch.
    state.batch.Put(EpochStartKey(part.stream, epoch_), EncodeEpochStart(head.next));
    state.holds_epoch_start = true;
    staged.needs_start = false;
    staged.start = head.next;
  }
  auto* prepared = static_cast<PreparedEntries*>(part.prepared);
  for (size_t i = 0; i < part.events.size(); ++i) {
    const Event& event = part.events[i];
    if (head.count() == 0) head.oldest_time = event.time;
    head.next = event.sequence + 1;
    head.bytes += event.ApproximateSize();
    // A prepared value is not needed after the write: move it, not copy it.
    state.batch.PutOwned(EntryKey(part.stream, event.sequence), prepared != nullptr
                                                                    ? std::move(prepared->values[i])
                                                                    : EncodeEntry(event, format_));
  }
  for (const LogKey& key : part.keys) {
    StageDedupe(state.batch, part.stream, key.key, key.hit, key.expires);
  }
  // A collection's documents: in the same write as their change events.
  for (const LogRecord& record : part.records) {
    state.batch.Put(MetadataRecordKey(record.key), record.value);
  }
  return absl::OkStatus();
}

void DurableLog::GroupState::Clear() {
  batch.Clear();
  heads.clear();
  needs_barrier = false;
  holds_epoch_start = false;
  new_stream = false;
  unwritten.clear();
}

absl::Status DurableLog::Append(absl::Span<const LogAppend> group) {
  MutexLock commit(&commit_mu_);
  GroupState& state = append_state_;
  state.Clear();
  // An entry per event and at most a head per member: the records of most
  // groups. Idempotency keys add theirs on top, at the cost of a
  // reallocation.
  size_t records = 0;
  for (const LogAppend& part : group) records += part.events.size() + 1;
  state.batch.Reserve(records);
  for (const LogAppend& part : group) KEEL_RETURN_IF_ERROR(StageAppend(state, part));
  return Commit(state, checkpoints_.Due(state.batch.ApproximateBytes()));
}

absl::Status DurableLog::TrimPrefix(absl::string_view stream, const LogTrim& cut) {
  KEEL_RETURN_IF_ERROR(verifier_.Ensure(stream));
  MutexLock commit(&commit_mu_);
  if (cold_ != nullptr && !cold_->SummaryOf(stream).empty()) return TrimWithCold(stream, cut);
  GroupState state;
  GroupState::Staged& staged = StagedHead(state, stream);
  const TrimPlan plan{cut.from, cut.new_first, cut.bytes, cut.new_oldest};
  KEEL_RETURN_IF_ERROR(ApplyTrim(*store_, format_, state.batch, stream, plan, staged.head));
  staged.trimmed = true;
  return Commit(state, /*checkpoint=*/false);
}

// One synced write ends the incarnation: the head goes, the incarnation
// record names where the next one starts, and cold segments become
// retiring (the next tiering pass deletes their objects). The old entries
// and key records stay until SweepDeleted removes them; nothing reads them
// meanwhile (reads and tail checks start at the head's first, key lookups
// ignore sequences up to the start).
absl::Status DurableLog::DeleteStream(absl::string_view stream) {
  KEEL_RETURN_IF_ERROR(verifier_.Ensure(stream));
  MutexLock commit(&commit_mu_);
  const Head head = CurrentHead(stream);
  const uint64_t start = head.next;
  WriteBatch batch;
  batch.Delete(HeadKey(stream));
  batch.Put(IncarnationKey(stream), EncodeIncarnation(start));
  std::optional<ColdTier::Expiry> expiry;
  if (cold_ != nullptr && !cold_->SummaryOf(stream).empty()) {
    KEEL_ASSIGN_OR_RETURN(expiry, cold_->StageExpiry(stream, start, batch));
  }
  MutexLock adopting(&adopt_mu_);
  KEEL_RETURN_IF_ERROR(store_->Write(batch, WriteOptions{.sync = true}));
  {
    MutexLock lock(&heads_mu_);
    heads_.erase(stream);
    adopted_.erase(stream);
    incarnations_[stream] = start;
  }
  checkpoints_.Forget(stream);
  if (expiry) {
    cold_->index().Install(stream, expiry->kept);
    cold_->Retired(stream, *std::move(expiry));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> DurableLog::SweepDeleted(absl::string_view stream, size_t budget) {
  const uint64_t start = IncarnationStart(stream);
  if (start == 0) return false;
  WriteBatch batch;
  std::unique_ptr<StoreIterator> it =
      store_->NewIterator(KeyRange{EntryKey(stream, 0), EntryKey(stream, start + 1)});
  for (it->Seek(EntryKey(stream, 0)); it->Valid() && batch.size() < budget; it->Next()) {
    batch.Delete(it->key());
  }
  KEEL_RETURN_IF_ERROR(it->status());
  KEEL_RETURN_IF_ERROR(
      StageForgetKeysThrough(*store_, batch, stream, start, budget - batch.size()).status());
  KEEL_RETURN_IF_ERROR(StageStreamRecordDeletes(stream, budget, batch));
  if (batch.size() == 0) return false;
  const bool more = batch.size() >= budget;
  // Unsynced: a crash that loses these deletes leaves the deletion's
  // tombstone, which sweeps them again before the bus serves anything; the
  // tombstone's own synced removal comes after every sweep.
  KEEL_RETURN_IF_ERROR(store_->Write(batch, WriteOptions{.sync = false}));
  return more;
}

// The records appends to `stream` stored (a collection's documents), up to
// `budget` deletes in `batch` in all.
absl::Status DurableLog::StageStreamRecordDeletes(absl::string_view stream, size_t budget,
                                                  WriteBatch& batch) {
  const std::string prefix = MetadataRecordKey(StreamRecordPrefix(stream));
  std::unique_ptr<StoreIterator> it = store_->NewIterator(KeyRange::Prefix(prefix));
  for (it->Seek(prefix); it->Valid() && batch.size() < budget; it->Next()) {
    batch.Delete(it->key());
  }
  return it->status();
}

absl::Status DurableLog::Commit(GroupState& state, bool checkpoint) {
  const uint64_t batch_bytes = state.batch.ApproximateBytes();
  StageHeads(state, checkpoint);
  // A stream's first head appears in heads_ only with the write that holds
  // it (AdoptHeadless looks for headless streams' entries meanwhile).
  std::optional<MutexLock> adopting;
  if (state.new_stream) adopting.emplace(&adopt_mu_);
  KEEL_RETURN_IF_ERROR(WriteGroup(state));
  {
    MutexLock lock(&heads_mu_);
    for (const auto& [stream, staged] : state.heads) {
      if (staged.head.started()) heads_[stream] = staged.head;  // Else, as before: no stream.
      if (staged.start != 0) epochs_.Started(stream, staged.start);
    }
  }
  checkpoints_.Committed(checkpoint, state.unwritten, batch_bytes);
  return absl::OkStatus();
}

absl::Status DurableLog::WriteGroup(const GroupState& state) {
  if (state.batch.size() == 0) return absl::OkStatus();  // Nothing staged, nothing to sync.
  if (state.needs_barrier && options_.sync != SyncMode::kAlways) {
    // Some head staged here accounts for entries of earlier, unsynced
    // writes. Those reach the disk first: LevelDB may keep a later log block
    // and lose an earlier one, and a head must never outlive any of its
    // entries (a hole below a head would be read past without a signal).
    KEEL_RETURN_IF_ERROR(store_->Write(WriteBatch(), WriteOptions{.sync = true}));
    if (options_.sync == SyncMode::kInterval) Synced();  // The interval restarts here.
  }
  const absl::Time start = context_.on_store_write ? absl::Now() : absl::InfinitePast();
  const bool sync = state.holds_epoch_start || SyncThisWrite();
  absl::Status status = store_->Write(state.batch, WriteOptions{.sync = sync});
  if (status.ok() && state.holds_epoch_start && options_.sync == SyncMode::kInterval) Synced();
  if (context_.on_store_write) context_.on_store_write(absl::Now() - start);
  return status;
}

void DurableLog::StageHeads(GroupState& state, bool checkpoint) {
  std::vector<absl::string_view>& unwritten = state.unwritten;
  for (const auto& [stream, staged] : state.heads) {
    if (!staged.head.started()) continue;  // Nothing appended.
    if (checkpoint || staged.unstored || staged.trimmed) {
      state.batch.Put(HeadKey(stream), EncodeHead(staged.head));
      // A stored head lags: this one accounts for earlier writes' entries too.
      if (!staged.unstored) state.needs_barrier = true;
    } else {
      unwritten.push_back(stream);
    }
  }
  if (!checkpoint) return;
  for (const std::string& stream : checkpoints_.lagging()) {
    if (state.heads.contains(stream)) continue;
    state.batch.Put(HeadKey(stream), EncodeHead(CurrentHead(stream)));
    state.needs_barrier = true;
  }
}

absl::StatusOr<std::optional<DedupeHit>> DurableLog::FindKey(absl::string_view stream,
                                                             absl::string_view key,
                                                             absl::Time now) {
  KEEL_ASSIGN_OR_RETURN(std::optional<DedupeHit> hit, LookupDedupe(*store_, stream, key, now));
  // A deleted incarnation's key, not swept yet, is no duplicate of anything.
  if (hit && hit->sequence <= IncarnationStart(stream)) return std::nullopt;
  return hit;
}

absl::StatusOr<KeyCollection> DurableLog::CollectKeys(absl::Time now, size_t budget) {
  GroupState state;
  KEEL_ASSIGN_OR_RETURN(DedupeCollection collection,
                        CollectExpiredKeys(*store_, state.batch, now, budget));
  KEEL_RETURN_IF_ERROR(WriteGroup(state));
  return KeyCollection{collection.collected, collection.next_expiry};
}

absl::StatusOr<absl::Time> DurableLog::NextKeyExpiry() { return FirstExpiry(*store_); }

void DurableLog::Synced() {
  MutexLock lock(&sync_mu_);
  last_sync_ = absl::Now();
  dirty_ = false;
}

bool DurableLog::SyncThisWrite() {
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
void DurableLog::SyncLoop() {
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
    if (!status.ok()) {
      context_.logger->Error(absl::StrCat("durable: periodic sync failed: ", status.ToString()));
    }
    sync_mu_.Lock();
  }
}

absl::Status DurableLog::Close() {
  verifier_.Stop();
  {
    MutexLock lock(&sync_mu_);
    stopping_ = true;
  }
  if (syncer_.joinable()) syncer_.join();
  // Every head written, so that the next open reads no entries to catch one up.
  GroupState checkpoint;
  absl::Status status;
  {
    MutexLock commit(&commit_mu_);
    status = Commit(checkpoint, /*checkpoint=*/true);
  }
  // The last write flushes everything (under interval or none) and, only
  // when everything else worked, tells the next open that the store was
  // closed cleanly.
  WriteBatch last;
  if (status.ok() && opened_) last.Delete(OpenMarkerKey());
  if (!last.empty() || options_.sync != SyncMode::kAlways) {
    status.Update(store_->Write(last, WriteOptions{.sync = true}));
  }
  if (options_.close_store) status.Update(store_->Close());
  return status;
}

absl::StatusOr<Head> DurableLog::HotHead(absl::string_view stream) {
  KEEL_RETURN_IF_ERROR(verifier_.Ensure(stream));
  return CurrentHead(stream);
}

absl::StatusOr<absl::Time> DurableLog::EntryTime(absl::string_view stream, uint64_t sequence) {
  const std::string key = EntryKey(stream, sequence);
  KEEL_ASSIGN_OR_RETURN(std::string value, store_->Get(key));
  absl::StatusOr<Event> event = DecodeEntry(stream, sequence, value, format_);
  if (!event.ok()) {
    return absl::DataLossError(
        absl::StrCat("key ", PrintableKey(key), ": ", event.status().message()));
  }
  return event->time;
}

absl::Status DurableLog::CommitTiered(absl::string_view stream, const ColdSegment& segment) {
  KEEL_RETURN_IF_ERROR(verifier_.Ensure(stream));
  MutexLock commit(&commit_mu_);
  GroupState state;
  GroupState::Staged& staged = StagedHead(state, stream);
  if (staged.head.first != segment.first || staged.head.next <= segment.last) {
    return absl::AbortedError(
        absl::StrCat("stream '", stream, "': the hot window no longer starts at ", segment.first));
  }
  Head moved = staged.head;
  moved.first = segment.last + 1;
  moved.bytes -= std::min(moved.bytes, segment.event_bytes);
  moved.oldest_time = absl::InfinitePast();
  if (moved.count() > 0) {
    KEEL_ASSIGN_OR_RETURN(moved.oldest_time, EntryTime(stream, moved.first));
  }
  KEEL_ASSIGN_OR_RETURN(std::shared_ptr<const ColdSegments> before,
                        cold_->index().SegmentsOf(stream));
  KEEL_ASSIGN_OR_RETURN(ColdSegments after, cold_->StageLive(stream, segment, state.batch));
  for (uint64_t seq = segment.first; seq <= segment.last; ++seq) {
    state.batch.Delete(EntryKey(stream, seq));
  }
  staged.head = moved;
  staged.trimmed = true;
  // Readable cold before the entries leave hot (Read relies on it).
  cold_->index().Install(stream, std::move(after));
  absl::Status status = Commit(state, /*checkpoint=*/false);
  if (!status.ok()) cold_->index().Install(stream, *before);
  return status;
}

// Cold segments expire whole, oldest first: those that end before the cut
// become retiring (the next tiering pass deletes their objects, then their
// records); hot entries go too when the cut passes them all. A cut inside
// the oldest segment removes nothing yet (kAborted, which the engine takes
// as "plan again later").
absl::Status DurableLog::TrimWithCold(absl::string_view stream, const LogTrim& cut) {
  const ColdSummary summary = cold_->SummaryOf(stream);
  if (cut.from != summary.first) {
    return absl::AbortedError(absl::StrCat("stream '", stream, "' was trimmed concurrently"));
  }
  GroupState state;
  GroupState::Staged& staged = StagedHead(state, stream);
  KEEL_ASSIGN_OR_RETURN(std::shared_ptr<const ColdSegments> before,
                        cold_->index().SegmentsOf(stream));
  KEEL_ASSIGN_OR_RETURN(ColdTier::Expiry expiry,
                        cold_->StageExpiry(stream, cut.new_first, state.batch));
  const bool hot_part = cut.new_first > staged.head.first;
  if (expiry.retired.empty() && !hot_part) {
    return absl::AbortedError(absl::StrCat("stream '", stream, "': cold segment ",
                                           before->front().object,
                                           " holds events on both sides of the cut; it expires "
                                           "whole once all of them are past retention"));
  }
  if (hot_part) {
    const TrimPlan plan{staged.head.first, cut.new_first,
                        cut.bytes - std::min(cut.bytes, expiry.event_bytes), cut.new_oldest};
    KEEL_RETURN_IF_ERROR(ApplyTrim(*store_, format_, state.batch, stream, plan, staged.head));
    staged.trimmed = true;
  }
  cold_->index().Install(stream, expiry.kept);
  absl::Status status = Commit(state, /*checkpoint=*/false);
  if (!status.ok()) {
    cold_->index().Install(stream, *before);
    return status;
  }
  KEEL_RETURN_IF_ERROR(cold_->Fault(TierStep::kExpiryMarked, stream));
  cold_->Retired(stream, std::move(expiry));
  return absl::OkStatus();
}

absl::StatusOr<TierReport> DurableLog::Tier(
    const std::function<RetentionLimits(absl::string_view)>& hot_of, absl::Time now,
    uint64_t budget) {
  if (cold_ == nullptr) return TierReport{};
  std::vector<std::string> streams;
  {
    ReaderMutexLock lock(&heads_mu_);
    streams.reserve(heads_.size());
    for (const auto& [stream, head] : heads_) streams.push_back(stream);
  }
  std::sort(streams.begin(), streams.end());
  return cold_->Maintain(streams, hot_of, now, budget);
}

bool DurableLog::NeedsTier(const std::function<RetentionLimits(absl::string_view)>& hot_of,
                           absl::Time now) const {
  if (cold_ == nullptr) return false;
  if (cold_->HasPendingWork()) return true;
  std::vector<std::pair<std::string, Head>> heads;
  {
    ReaderMutexLock lock(&heads_mu_);
    heads.assign(heads_.begin(), heads_.end());
  }
  for (const auto& [stream, head] : heads) {
    const RetentionLimits hot = hot_of(stream);
    if (!hot.unbounded() && hot.Exceeded(head.count(), head.bytes, head.oldest_time, now)) {
      return true;
    }
  }
  return false;
}

}  // namespace keel::durable
