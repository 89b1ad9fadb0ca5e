#include "keel/drivers/durable/recovery.h"

#include "absl/algorithm/container.h"
#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"
#include "keel/drivers/durable/dedupe_index.h"

namespace keel::durable {
namespace {

absl::Status NameKey(const absl::Status& status, absl::string_view key) {
  return absl::Status(status.code(),
                      absl::StrCat("key ", PrintableKey(key), ": ", status.message()));
}

absl::Status WriteMeta(StateStore& store, const StoreMeta& meta) {
  WriteBatch batch;
  batch.Put(MetaKey(), EncodeMeta(meta));
  return store.Write(batch, WriteOptions{.sync = true});
}

// A random non-zero epoch that is none of `taken`.
uint64_t NewEpoch(const StoreMeta& taken) {
  absl::BitGen gen;
  for (;;) {
    const uint64_t epoch = absl::Uniform<uint64_t>(absl::IntervalClosed, gen, 1, UINT64_MAX);
    if (!taken.Had(epoch)) return epoch;
  }
}

// Reads the store meta, creating it (with a fresh epoch, in the current
// format) in an empty store.
absl::StatusOr<StoreMeta> LoadOrCreateMeta(StateStore& store) {
  absl::StatusOr<std::string> meta = store.Get(MetaKey());
  if (meta.ok()) {
    absl::StatusOr<StoreMeta> decoded = DecodeMeta(*meta);
    if (!decoded.ok()) return NameKey(decoded.status(), MetaKey());
    return *decoded;
  }
  if (meta.status().code() != absl::StatusCode::kNotFound) return meta.status();
  std::unique_ptr<StoreIterator> heads = store.NewIterator(HeadRange());
  heads->Seek(HeadRange().start);
  if (heads->Valid()) {
    return absl::DataLossError(absl::StrCat("store has stream heads (e.g. key ",
                                            PrintableKey(heads->key()),
                                            ") but no meta record (key M)"));
  }
  KEEL_RETURN_IF_ERROR(heads->status());
  StoreMeta created;
  created.epoch = NewEpoch(created);
  KEEL_RETURN_IF_ERROR(WriteMeta(store, created));
  return created;
}

// Every epoch start, each checked to name an epoch of the store (or 0, the
// floor of the forgotten ones).
absl::StatusOr<EpochStarts> LoadEpochStarts(StateStore& store, const StoreMeta& meta) {
  EpochStarts starts;
  std::unique_ptr<StoreIterator> it = store.NewIterator(EpochStartRange());
  for (it->Seek(EpochStartRange().start); it->Valid(); it->Next()) {
    KEEL_ASSIGN_OR_RETURN(auto stream_epoch, ParseEpochStartKey(it->key()));
    const auto [stream, epoch] = stream_epoch;
    absl::StatusOr<uint64_t> first = DecodeEpochStart(it->value());
    if (!first.ok()) return NameKey(first.status(), it->key());
    if (epoch != kForgottenEpochs && !meta.Had(epoch)) {
      return absl::DataLossError(absl::StrCat("key ", PrintableKey(it->key()),
                                              ": epoch start of an epoch the store never had"));
    }
    starts[stream].push_back(EpochStart{epoch, *first});
  }
  KEEL_RETURN_IF_ERROR(it->status());
  return starts;
}

// Adds the entries after head.last() that continue it to `head`, and to
// `repair` the deletes of those after the first hole, with their
// idempotency records. An empty head that never started (entries whose head
// a crash lost) is continued by whichever entry comes first.
absl::Status CatchUpHead(StateStore& store, StoreFormat format, absl::string_view stream,
                         uint64_t last_seq, Head& head, TailRepair& repair) {
  std::unique_ptr<StoreIterator> it = store.NewIterator(EntryRange(stream));
  uint64_t seen_last = head.last();
  for (it->Seek(EntryKey(stream, head.next)); it->Valid(); it->Next()) {
    KEEL_ASSIGN_OR_RETURN(uint64_t seq, EntrySequence(it->key()));
    seen_last = seq;
    // A damaged entry fails the stream, dropped or not: only a crash that
    // lost whole writes is repaired here.
    absl::StatusOr<Event> event = DecodeEntry(stream, seq, it->value(), format);
    if (!event.ok()) return NameKey(event.status(), it->key());
    if (repair.dropped > 0 || (head.started() && seq != head.next)) {
      if (repair.dropped++ == 0) repair.first_dropped = seq;
      repair.last_dropped = seq;
      repair.batch.Delete(it->key());
      if (event->idempotency_key) {
        // A damaged record stays as it was: lookups of its key report it,
        // and the stream's intact entries stay readable.
        absl::Status forgot =
            StageForgetKey(store, repair.batch, stream, *event->idempotency_key, seq);
        if (!forgot.ok() && forgot.code() != absl::StatusCode::kDataLoss) return forgot;
      }
      continue;
    }
    if (head.count() == 0) {
      head.first = seq;
      head.oldest_time = event->time;
    }
    head.bytes += event->ApproximateSize();
    head.next = seq + 1;
    repair.caught_up = true;
  }
  KEEL_RETURN_IF_ERROR(it->status());
  if (seen_last != last_seq) {
    return absl::DataLossError(
        absl::StrCat("entries of stream '", stream, "' changed while its tail was verified"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TailRepair> VerifyTail(StateStore& store, StoreFormat format,
                                      absl::string_view stream, Head& head) {
  // From the head's first: entries below it are a deleted incarnation's
  // that a sweep has not removed yet (or none).
  std::unique_ptr<StoreIterator> it =
      store.NewIterator(KeyRange{EntryKey(stream, head.first), EntryRange(stream).limit});
  it->SeekToLast();
  if (!it->Valid()) {
    KEEL_RETURN_IF_ERROR(it->status());
    if (head.count() == 0) return TailRepair{};
    return absl::DataLossError(absl::StrCat("key ", PrintableKey(HeadKey(stream)), ": head says [",
                                            head.first, ", ", head.last(),
                                            "] but the stream has no entries"));
  }
  const std::string last_key(it->key());
  KEEL_ASSIGN_OR_RETURN(uint64_t last_seq, EntrySequence(last_key));
  absl::StatusOr<Event> last = DecodeEntry(stream, last_seq, it->value(), format);
  if (!last.ok()) return NameKey(last.status(), last_key);
  if (last_seq < head.last()) {
    return absl::DataLossError(absl::StrCat("key ", PrintableKey(HeadKey(stream)),
                                            ": head says last sequence ", head.last(),
                                            " but the last entry is ", last_seq));
  }
  TailRepair repair;
  if (last_seq > head.last()) {
    KEEL_RETURN_IF_ERROR(CatchUpHead(store, format, stream, last_seq, head, repair));
  }
  return repair;
}

absl::Status WriteRepair(StateStore& store, absl::string_view stream, TailRepair& repair,
                         const Head& head) {
  repair.batch.Put(HeadKey(stream), EncodeHead(head));
  return store.Write(repair.batch, WriteOptions{.sync = true});
}

void LogDropped(Logger& logger, absl::string_view stream, const TailRepair& repair,
                const Head& head) {
  if (repair.dropped == 0) return;
  logger.Warn(absl::StrCat("durable: stream '", stream, "': an unsynced crash lost sequences ",
                           head.next, "..", repair.first_dropped - 1, " but kept ",
                           repair.first_dropped, "..", repair.last_dropped, "; dropped those ",
                           repair.dropped, " entries so that the stream continues at ", head.next,
                           " without a hole"));
}

absl::StatusOr<RecoveredState> Recover(StateStore& store) {
  RecoveredState state;
  KEEL_ASSIGN_OR_RETURN(state.meta, LoadOrCreateMeta(store));
  std::unique_ptr<StoreIterator> it = store.NewIterator(HeadRange());
  for (it->Seek(HeadRange().start); it->Valid(); it->Next()) {
    absl::StatusOr<Head> head = DecodeHead(it->value());
    if (!head.ok()) return NameKey(head.status(), it->key());
    state.heads.emplace(std::string(StreamOfHeadKey(it->key())), *head);
  }
  KEEL_RETURN_IF_ERROR(it->status());
  std::unique_ptr<StoreIterator> deleted = store.NewIterator(IncarnationRange());
  for (deleted->Seek(IncarnationRange().start); deleted->Valid(); deleted->Next()) {
    absl::StatusOr<uint64_t> start = DecodeIncarnation(deleted->value());
    if (!start.ok()) return NameKey(start.status(), deleted->key());
    state.incarnations.emplace(std::string(StreamOfIncarnationKey(deleted->key())), *start);
  }
  KEEL_RETURN_IF_ERROR(deleted->status());
  KEEL_ASSIGN_OR_RETURN(state.epoch_starts, LoadEpochStarts(store, state.meta));
  return state;
}

// Folds a stream's start in `forgotten` into its floor (the start of epoch
// kForgottenEpochs, the smallest of every forgotten epoch's): a group record
// of a forgotten epoch must not read past a sequence any later epoch gave
// again.
void ForgetEpoch(absl::string_view stream, std::vector<EpochStart>& starts, uint64_t forgotten,
                 WriteBatch& batch) {
  auto start = absl::c_find_if(starts, [&](const EpochStart& s) { return s.epoch == forgotten; });
  if (start == starts.end()) return;
  const uint64_t first = start->first;
  starts.erase(start);
  batch.Delete(EpochStartKey(stream, forgotten));
  auto floor =
      absl::c_find_if(starts, [](const EpochStart& s) { return s.epoch == kForgottenEpochs; });
  if (floor == starts.end())
    floor = starts.insert(starts.end(), EpochStart{kForgottenEpochs, first});
  floor->first = std::min(floor->first, first);
  batch.Put(EpochStartKey(stream, kForgottenEpochs), EncodeEpochStart(floor->first));
}

void StageNewEpoch(RecoveredState& state, WriteBatch& batch) {
  state.meta.earlier_epochs.push_back(state.meta.epoch);
  state.meta.epoch = NewEpoch(state.meta);
  if (state.meta.earlier_epochs.size() > kMaxEarlierEpochs) {
    const uint64_t forgotten = state.meta.earlier_epochs.front();
    state.meta.earlier_epochs.erase(state.meta.earlier_epochs.begin());
    for (auto& [stream, starts] : state.epoch_starts) ForgetEpoch(stream, starts, forgotten, batch);
  }
  batch.Put(MetaKey(), EncodeMeta(state.meta));
}

absl::StatusOr<std::optional<OpenMarker>> ReadOpenMarker(StateStore& store) {
  absl::StatusOr<std::string> found = store.Get(OpenMarkerKey());
  if (found.status().code() == absl::StatusCode::kNotFound) return std::nullopt;
  if (!found.ok()) return found.status();
  // A marker that does not decode still says the store was not closed;
  // what that process acknowledged is unknown, so assume the worst.
  absl::StatusOr<OpenMarker> decoded = DecodeOpenMarker(*found);
  return decoded.ok() ? *decoded : OpenMarker{.acks_synced = false};
}

void StageOpenMarker(bool acks_synced, absl::string_view lifetime,
                     const std::optional<OpenMarker>& previous, bool lost_now, WriteBatch& batch) {
  // Until a clean close, the marker keeps the worst of the processes since
  // the last one: an open after an unsynced crash that itself crashes
  // before its warning was read must not make the next open say less.
  const bool kept_synced = acks_synced && (!previous || previous->acks_synced);
  const bool lost = lost_now || (previous && previous->lost);
  batch.Put(OpenMarkerKey(),
            EncodeOpenMarker(OpenMarker{
                .acks_synced = kept_synced, .lost = lost, .lifetime = std::string(lifetime)}));
}

bool MayHaveLostAcknowledgedWrites(const OpenMarker& previous, absl::string_view lifetime) {
  return !previous.acks_synced && (previous.lifetime.empty() || previous.lifetime != lifetime);
}

std::string UncleanOpenMessage(const OpenMarker& previous, bool lost_now) {
  constexpr absl::string_view kUnclean =
      "the store was not closed cleanly (the process was killed, or the machine stopped); "
      "heads that lag are caught up from the entries";
  if (previous.acks_synced) {
    return absl::StrCat(kUnclean, "; it ran with sync=always, so every acknowledged event is kept");
  }
  if (lost_now) {
    return absl::StrCat(
        kUnclean,
        "; it ran with sync=interval or none, and the machine may have stopped (or the store "
        "failed a write) since: events acknowledged after its last sync may be lost, and their "
        "sequences will be handed out again; the store starts a new epoch, so a reader whose "
        "cursor names a lost event gets cursor_mismatch instead of missing the events that "
        "take its sequence (rfcs/0003-durable-layout.md, Epochs)");
  }
  if (previous.lost) {
    return absl::StrCat(
        kUnclean,
        "; an earlier open since the last clean close found that events acknowledged after a "
        "sync may be lost (the machine stopped, the store failed a write, or the open marker "
        "could not be read), and the store started a new epoch then, so a reader whose cursor "
        "names a lost event gets cursor_mismatch (rfcs/0003-durable-layout.md, Epochs)");
  }
  return absl::StrCat(kUnclean,
                      "; it ran with sync=interval or none, but the machine has not stopped "
                      "since (the store's unsynced writes outlive a process), so every "
                      "acknowledged event is kept");
}

}  // namespace keel::durable
