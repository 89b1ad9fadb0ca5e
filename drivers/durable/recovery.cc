#include "drivers/durable/recovery.h"

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "core/status_macros.h"

namespace keel::durable {
namespace {

absl::Status NameKey(const absl::Status& status, absl::string_view key) {
  return absl::Status(status.code(),
                      absl::StrCat("key ", PrintableKey(key), ": ", status.message()));
}

// Reads the store meta, creating it (with a fresh epoch) in an empty store.
absl::StatusOr<uint64_t> LoadOrCreateEpoch(StateStore& store) {
  absl::StatusOr<std::string> meta = store.Get(MetaKey());
  if (meta.ok()) {
    absl::StatusOr<StoreMeta> decoded = DecodeMeta(*meta);
    if (!decoded.ok()) return NameKey(decoded.status(), MetaKey());
    return decoded->epoch;
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
  absl::BitGen gen;
  StoreMeta created{absl::Uniform<uint64_t>(absl::IntervalClosed, gen, 1, UINT64_MAX)};
  WriteBatch batch;
  batch.Put(MetaKey(), EncodeMeta(created));
  KEEL_RETURN_IF_ERROR(store.Write(batch, WriteOptions{.sync = true}));
  return created.epoch;
}

// Adds the entries after head.last() up to `last_seq` to `head`.
absl::Status CatchUpHead(StateStore& store, absl::string_view stream, uint64_t last_seq,
                         Head& head) {
  std::unique_ptr<StoreIterator> it = store.NewIterator(EntryRange(stream));
  for (it->Seek(EntryKey(stream, head.next)); it->Valid(); it->Next()) {
    KEEL_ASSIGN_OR_RETURN(uint64_t seq, EntrySequence(it->key()));
    absl::StatusOr<Event> event = DecodeEntry(stream, seq, it->value());
    if (!event.ok()) return NameKey(event.status(), it->key());
    if (head.count() == 0) {
      head.first = seq;
      head.oldest_time = event->time;
    }
    head.bytes += event->ApproximateSize();
    head.next = seq + 1;
  }
  KEEL_RETURN_IF_ERROR(it->status());
  if (head.last() != last_seq) {
    return absl::DataLossError(absl::StrCat("entries of stream '", stream,
                                            "' changed during recovery"));
  }
  return absl::OkStatus();
}

// Checks `head` against the stream's last entry; returns true if repaired.
absl::StatusOr<bool> CheckTail(StateStore& store, absl::string_view stream, Head& head) {
  std::unique_ptr<StoreIterator> it = store.NewIterator(EntryRange(stream));
  it->SeekToLast();
  if (!it->Valid()) {
    KEEL_RETURN_IF_ERROR(it->status());
    if (head.count() == 0) return false;
    return absl::DataLossError(absl::StrCat("key ", PrintableKey(HeadKey(stream)), ": head says [",
                                            head.first, ", ", head.last(),
                                            "] but the stream has no entries"));
  }
  const std::string last_key(it->key());
  KEEL_ASSIGN_OR_RETURN(uint64_t last_seq, EntrySequence(last_key));
  absl::StatusOr<Event> last = DecodeEntry(stream, last_seq, it->value());
  if (!last.ok()) return NameKey(last.status(), last_key);
  if (last_seq < head.last()) {
    return absl::DataLossError(absl::StrCat("key ", PrintableKey(HeadKey(stream)),
                                            ": head says last sequence ", head.last(),
                                            " but the last entry is ", last_seq));
  }
  if (last_seq == head.last()) return false;
  KEEL_RETURN_IF_ERROR(CatchUpHead(store, stream, last_seq, head));
  return true;
}

}  // namespace

absl::StatusOr<RecoveredState> Recover(StateStore& store, Logger& logger) {
  RecoveredState state;
  KEEL_ASSIGN_OR_RETURN(state.epoch, LoadOrCreateEpoch(store));
  WriteBatch repairs;
  std::unique_ptr<StoreIterator> it = store.NewIterator(HeadRange());
  for (it->Seek(HeadRange().start); it->Valid(); it->Next()) {
    std::string stream(StreamOfHeadKey(it->key()));
    absl::StatusOr<Head> head = DecodeHead(it->value());
    if (!head.ok()) return NameKey(head.status(), it->key());
    const uint64_t lagging_next = head->next;
    KEEL_ASSIGN_OR_RETURN(bool repaired, CheckTail(store, stream, *head));
    if (repaired) {
      logger.Warn(absl::StrCat("durable: repaired lagging head of stream '", stream,
                               "': next sequence ", lagging_next, " -> ", head->next));
      repairs.Put(HeadKey(stream), EncodeHead(*head));
      state.repaired_streams.push_back(stream);
    }
    state.heads.emplace(std::move(stream), *head);
  }
  KEEL_RETURN_IF_ERROR(it->status());
  if (!repairs.empty()) KEEL_RETURN_IF_ERROR(store.Write(repairs, WriteOptions{.sync = true}));
  return state;
}

}  // namespace keel::durable
