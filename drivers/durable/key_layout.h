// The durable driver's keys and records in a StateStore. The format is
// specified in rfcs/0003-durable-layout.md and at the top of key_layout.cc.
//
// Thread safety: pure functions.
#ifndef KEEL_DRIVERS_DURABLE_KEY_LAYOUT_H_
#define KEEL_DRIVERS_DURABLE_KEY_LAYOUT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/core/event.h"
#include "keel/statestore/state_store.h"

namespace keel::durable {

// The mutable per-stream record. Sequences [first, next) are retained.
struct Head {
  uint64_t first = 1;
  uint64_t next = 1;
  uint64_t bytes = 0;
  absl::Time oldest_time = absl::InfinitePast();

  uint64_t count() const { return next - first; }
  uint64_t last() const { return next - 1; }
  // Whether the stream ever had an event. Only such a stream has a head in
  // the store: one is written by the commit that appends its first events.
  bool started() const { return next > 1; }
  friend bool operator==(const Head&, const Head&) = default;
};

// The store format, recorded in the meta record. It says which checksum
// protects the entries (entries carry no version of their own); heads and
// meta are the same in both. A store keeps the format it was created with:
// new stores use kCrc32c, and a version-1 store is read and appended to with
// FNV-1a entries, so stores written by earlier Keel versions keep working.
enum class StoreFormat : uint8_t {
  kFnv1a = 1,   // Entry check = FNV-1a of the envelope.
  kCrc32c = 2,  // Entry check = CRC32C of the envelope (hardware-accelerated).
};
inline constexpr StoreFormat kCurrentStoreFormat = StoreFormat::kCrc32c;

struct StoreMeta {
  uint64_t epoch = 0;
  StoreFormat format = kCurrentStoreFormat;
  // The store's epochs before `epoch`, oldest first. Each ended at an open
  // that found an unsynced crash (rfcs/0003-durable-layout.md, "Epochs").
  std::vector<uint64_t> earlier_epochs;

  // Whether `e` is the store's epoch or one of its earlier ones.
  bool Had(uint64_t e) const;
  friend bool operator==(const StoreMeta&, const StoreMeta&) = default;
};

// The first sequence a stream was given in an epoch after the store's
// first, written with that sequence's entry. Cursors of earlier epochs are
// good below it (core/replayer.h, EarlierEpoch).
struct EpochStart {
  uint64_t epoch = 0;
  uint64_t first = 0;
  friend bool operator==(const EpochStart&, const EpochStart&) = default;
};

// The epoch of a stream's floor: the smallest start of the epochs the store
// forgot (recovery.h, kMaxEarlierEpochs). No epoch is 0.
inline constexpr uint64_t kForgottenEpochs = 0;

// Present while a process has the store open: written (synced) at open,
// deleted by Close()'s last write. Found at open, it says the last process
// did not close the store (rfcs/0003-durable-layout.md, "Unclean shutdown").
struct OpenMarker {
  // That process acknowledged only synced writes (sync=always).
  bool acks_synced = false;
  // An open since the last clean close found that acknowledged events may
  // have been lost (and started a new epoch); kept until a clean close, so
  // that the warning of an open after a failed or killed one says so too.
  bool lost = false;
  // The store's StateStore::UnsyncedWritesLifetime() when that process
  // opened it; empty when unknown (and in markers of Keel before it).
  std::string lifetime;
};

std::string MetaKey();
std::string OpenMarkerKey();
std::string HeadKey(absl::string_view stream);
KeyRange HeadRange();
// Every entry of `stream`, and its entry for `sequence`.
KeyRange EntryRange(absl::string_view stream);
std::string EntryKey(absl::string_view stream, uint64_t sequence);
// Parses an entry key (of any stream) into its sequence.
absl::StatusOr<uint64_t> EntrySequence(absl::string_view key);
// The stream named by a head key.
absl::string_view StreamOfHeadKey(absl::string_view key);
// A stream's start in `epoch`, and every such record of the store.
std::string EpochStartKey(absl::string_view stream, uint64_t epoch);
KeyRange EpochStartRange();
// Parses an epoch-start key into its stream and epoch.
absl::StatusOr<std::pair<absl::string_view, uint64_t>> ParseEpochStartKey(absl::string_view key);

std::string EncodeMeta(const StoreMeta& meta);
absl::StatusOr<StoreMeta> DecodeMeta(absl::string_view value);
std::string EncodeOpenMarker(const OpenMarker& marker);
absl::StatusOr<OpenMarker> DecodeOpenMarker(absl::string_view value);

// The value of an epoch-start record: its first sequence.
std::string EncodeEpochStart(uint64_t first);
absl::StatusOr<uint64_t> DecodeEpochStart(absl::string_view value);

// A deleted stream's incarnation record: where its current incarnation
// starts (LogBounds::incarnation_start). It outlives the stream's events,
// so that cursors of a deleted incarnation stay mismatches.
std::string IncarnationKey(absl::string_view stream);
KeyRange IncarnationRange();
absl::string_view StreamOfIncarnationKey(absl::string_view key);
std::string EncodeIncarnation(uint64_t start);
absl::StatusOr<uint64_t> DecodeIncarnation(absl::string_view value);

std::string EncodeHead(const Head& head);
absl::StatusOr<Head> DecodeHead(absl::string_view value);

// An entry value holds the event without its stream and sequence (both are in
// the key), behind a checksum. EncodeEntry ignores event.stream/sequence.
// `format` is the store's (StoreMeta::format).
std::string EncodeEntry(const Event& event, StoreFormat format = kCurrentStoreFormat);
absl::StatusOr<Event> DecodeEntry(absl::string_view stream, uint64_t sequence,
                                  absl::string_view value,
                                  StoreFormat format = kCurrentStoreFormat);
// The same into a default-constructed `event` (replay fills its page in place).
absl::Status DecodeEntryInto(absl::string_view stream, uint64_t sequence, absl::string_view value,
                             StoreFormat format, Event& event);

// A printable form of a binary key for error messages.
std::string PrintableKey(absl::string_view key);

}  // namespace keel::durable

#endif  // KEEL_DRIVERS_DURABLE_KEY_LAYOUT_H_
