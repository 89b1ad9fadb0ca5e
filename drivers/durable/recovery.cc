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
  absl::BitGen gen;
  StoreMeta created{absl::Uniform<uint64_t>(absl::IntervalClosed, gen, 1, UINT64_MAX)};
  WriteBatch batch;
  batch.Put(MetaKey(), EncodeMeta(created));
  KEEL_RETURN_IF_ERROR(store.Write(batch, WriteOptions{.sync = true}));
  return created;
}

// Adds the entries after head.last() up to `last_seq` to `head`.
absl::Status CatchUpHead(StateStore& store, StoreFormat format, absl::string_view stream,
                         uint64_t last_seq, Head& head) {
  std::unique_ptr<StoreIterator> it = store.NewIterator(EntryRange(stream));
  for (it->Seek(EntryKey(stream, head.next)); it->Valid(); it->Next()) {
    KEEL_ASSIGN_OR_RETURN(uint64_t seq, EntrySequence(it->key()));
    absl::StatusOr<Event> event = DecodeEntry(stream, seq, it->value(), format);
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
                                            "' changed while its tail was verified"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> VerifyTail(StateStore& store, StoreFormat format, absl::string_view stream,
                                Head& head) {
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
  absl::StatusOr<Event> last = DecodeEntry(stream, last_seq, it->value(), format);
  if (!last.ok()) return NameKey(last.status(), last_key);
  if (last_seq < head.last()) {
    return absl::DataLossError(absl::StrCat("key ", PrintableKey(HeadKey(stream)),
                                            ": head says last sequence ", head.last(),
                                            " but the last entry is ", last_seq));
  }
  if (last_seq == head.last()) return false;
  KEEL_RETURN_IF_ERROR(CatchUpHead(store, format, stream, last_seq, head));
  return true;
}

absl::StatusOr<RecoveredState> Recover(StateStore& store) {
  RecoveredState state;
  KEEL_ASSIGN_OR_RETURN(StoreMeta meta, LoadOrCreateMeta(store));
  state.epoch = meta.epoch;
  state.format = meta.format;
  std::unique_ptr<StoreIterator> it = store.NewIterator(HeadRange());
  for (it->Seek(HeadRange().start); it->Valid(); it->Next()) {
    absl::StatusOr<Head> head = DecodeHead(it->value());
    if (!head.ok()) return NameKey(head.status(), it->key());
    state.heads.emplace(std::string(StreamOfHeadKey(it->key())), *head);
  }
  KEEL_RETURN_IF_ERROR(it->status());
  return state;
}

}  // namespace keel::durable
