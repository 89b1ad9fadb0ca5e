// StreamLog: the storage seam. A driver that keeps events itself (in memory,
// in a key-value store, in files) implements only this interface; the
// storage engine (core/log_bus.h) turns it into a whole EventBus: it
// validates publishes, assigns sequences, applies idempotency keys and
// expected-last-sequence checks, group-commits, delivers to subscribers in
// sequence order, resolves cursors, enforces retention and serves consumer
// groups. The conformance suite (tests/conformance/) proves the rest.
//
// A log stores, per stream, events at consecutive sequences from `first`
// to `next - 1`. It never chooses a sequence: Append receives events that
// already carry theirs (the stream's `next`, then +1 each), and TrimPrefix
// receives the cut the engine decided. A log may also drop a prefix on its
// own (a bounded ring does); Bounds then says so.
//
// Threading contract: the mutating calls — Append, TrimPrefix, CollectKeys,
// DeleteStream, SweepDeleted and Close — come from one thread at a time, never concurrently with
// each other, in the order the engine committed them. Bounds, List, Read and FindKey may run at any
// time, concurrently with each other and with the mutating calls, and must see only whole appends
// (a reader never sees half of an append, nor an event before the Append storing it has returned).
//
// Errors: kDataLoss (naming what is damaged) for records that do not
// decode, kUnavailable when the storage cannot be reached, kAborted from
// TrimPrefix when the cut no longer starts at the stream's first sequence.
#ifndef KEEL_CORE_STREAM_LOG_H_
#define KEEL_CORE_STREAM_LOG_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "keel/core/append_plan.h"
#include "keel/core/commit_hook.h"
#include "keel/core/event.h"
#include "keel/core/metadata_store.h"
#include "keel/core/replayer.h"

namespace keel {

// Where a stream stands in a log. A stream never appended to has the
// defaults: first = next = 1.
struct LogBounds {
  uint64_t first = 1;                             // Oldest retained sequence.
  uint64_t next = 1;                              // The sequence the stream's next event gets.
  uint64_t bytes = 0;                             // Retained events' Event::ApproximateSize.
  absl::Time oldest_time = absl::InfinitePast();  // Time of event `first`.
  // Where the stream's current incarnation begins: cursors below it name
  // an incarnation DeleteStream ended (0: none ended). A stream deleted at
  // `next` = F starts again with incarnation_start = F and first = next =
  // F + 1. Sequence F is never an event's, so a cursor of the deleted
  // incarnation (at most F - 1) and one of the new (at least F, the
  // position before its first event) never name the same position.
  uint64_t incarnation_start = 0;

  uint64_t count() const { return next - first; }
  uint64_t last() const { return next - 1; }
};

// What Replayer::Bounds answers for `stream` at `bounds` on a bus of
// `epoch`, earlier epochs aside.
StreamInfo StreamInfoAt(absl::string_view stream, uint64_t epoch, const LogBounds& bounds);

// An idempotency key to remember with the event that first carried it.
struct LogKey {
  absl::string_view key;
  DedupeHit hit;
  absl::Time expires;
};

// What a log may compute on a publisher's thread before the append is
// queued (StreamLog::Prepare), so that the single committing thread only
// copies it. Opaque to the engine.
class PreparedRecords {
 public:
  virtual ~PreparedRecords() = default;
};

// One stream's part of an atomic Append.
struct LogAppend {
  absl::string_view stream;
  // Consecutive sequences from the stream's `next`; times non-decreasing
  // within the stream, and not before its newest event's.
  absl::Span<const Event> events;
  // Keys to remember with `events` (only for a log whose KeepsKeys()).
  absl::Span<const LogKey> keys;
  // What Prepare returned for exactly these events (same order, same
  // fields but the sequence), or null when they differ from what was
  // prepared (a duplicate dropped, a time raised): then encode `events`.
  PreparedRecords* prepared = nullptr;
  // MetadataStore records to put in the same atomic write (only for a log
  // whose StoresRecords()).
  absl::Span<const LogRecord> records;
};

// The prefix of a stream to remove: events [from, new_first).
struct LogTrim {
  uint64_t from = 0;       // The stream's first sequence when the cut was planned.
  uint64_t new_first = 0;  // The new first sequence.
  uint64_t bytes = 0;      // The removed events' Event::ApproximateSize.
  absl::Time new_oldest = absl::InfinitePast();  // Time of event new_first, if retained.

  uint64_t events() const { return new_first - from; }
};

// What CollectKeys removed.
struct KeyCollection {
  size_t collected = 0;
  absl::Time next_expiry = absl::InfiniteFuture();  // Of the next key still kept.
};

// Receives the events of a Read, decoded in place: the log fills Slot()
// with the next event (every field, the sequence included), then calls
// Take(); Take returns false when the read must stop.
class ReadSink {
 public:
  virtual Event& Slot() = 0;
  virtual bool Take() = 0;

 protected:
  ~ReadSink() = default;
};

class StreamLog {
 public:
  virtual ~StreamLog() = default;

  // The epoch that cursors of this log carry: fixed for the life of the
  // log's data (a fresh random one for storage that dies with the process),
  // so that a cursor of other data is a mismatch, never a misread.
  virtual uint64_t epoch() const = 0;

  virtual absl::StatusOr<LogBounds> Bounds(absl::string_view stream) = 0;
  // Streams that have a record, whose names start with `prefix`, sorted by
  // name, at most `limit`.
  virtual absl::StatusOr<std::vector<std::pair<std::string, LogBounds>>> List(
      absl::string_view prefix, size_t limit) = 0;
  // Feeds `sink` the retained events of `stream` with sequences in
  // [from, to], in order, until Take() returns false.
  virtual absl::Status Read(absl::string_view stream, uint64_t from, uint64_t to,
                            ReadSink& sink) = 0;

  // Stores every part of `group`, all or nothing. On failure nothing of the
  // group is stored and the next Append reuses the same sequences.
  virtual absl::Status Append(absl::Span<const LogAppend> group) = 0;
  virtual absl::Status TrimPrefix(absl::string_view stream, const LogTrim& cut) = 0;
  // Optional (DeletesStreams()): ends the incarnation of `stream`, which has
  // events (next > 1). Atomically, and durably for a durable log: the stream
  // has no events and no idempotency keys, is absent from List, and its
  // bounds become first = next = F + 1 with incarnation_start = F, where F
  // is its `next` before. Records the deletion leaves behind (old entries,
  // kept keys) are removed by SweepDeleted; until then they are never read.
  virtual bool DeletesStreams() const { return false; }
  virtual absl::Status DeleteStream(absl::string_view stream) {
    (void)stream;
    return absl::UnimplementedError("this log cannot delete streams");
  }
  // Removes up to about `budget` of the records deletions of `stream` left
  // behind (its old entries and idempotency keys, and the records its
  // appends stored under StreamRecordPrefix); returns whether more remain.
  // A mutating call.
  virtual absl::StatusOr<bool> SweepDeleted(absl::string_view stream, size_t budget) {
    (void)stream, (void)budget;
    return false;
  }
  // Releases the storage; no call follows.
  virtual absl::Status Close() { return absl::OkStatus(); }

  // Optional: see PreparedRecords. Called concurrently from any thread.
  virtual std::unique_ptr<PreparedRecords> Prepare(absl::Span<const Event> events) {
    (void)events;
    return nullptr;
  }

  // Idempotency keys. A log that persists them (so that a retry after a
  // restart is still recognised) returns true from KeepsKeys, stores
  // LogAppend::keys with their events and answers FindKey, CollectKeys and
  // NextKeyExpiry; the engine keeps the keys of any other log in memory.
  virtual bool KeepsKeys() const { return false; }
  // The live record of `key` at `now` (an expired one is absent).
  virtual absl::StatusOr<std::optional<DedupeHit>> FindKey(absl::string_view stream,
                                                           absl::string_view key, absl::Time now) {
    (void)stream, (void)key, (void)now;
    return std::nullopt;
  }
  // Removes up to `budget` keys expired at `now`.
  virtual absl::StatusOr<KeyCollection> CollectKeys(absl::Time now, size_t budget) {
    (void)now, (void)budget;
    return KeyCollection{};
  }
  // The earliest expiry of a kept key, read once when the engine starts.
  virtual absl::StatusOr<absl::Time> NextKeyExpiry() { return absl::InfiniteFuture(); }

  // Optional: earlier epochs whose cursors still name events of `stream`
  // (core/replayer.h, EarlierEpoch), for a log whose data outlives a crash
  // that may have lost acknowledged events.
  virtual std::vector<EarlierEpoch> EarlierEpochs(absl::string_view stream) const {
    (void)stream;
    return {};
  }
  // Optional: where declarations and consumer groups persist; called once.
  // Null keeps them in memory.
  virtual std::unique_ptr<MetadataStore> TakeMetadataStore() { return nullptr; }
  // Whether Append stores LogAppend::records with the events, in the same
  // atomic write, into the store TakeMetadataStore returned. The engine
  // then offers collections (core/collections.h).
  virtual bool StoresRecords() const { return false; }
  // Whether an Append may wait for a disk or a network. The engine then
  // commits asynchronous publishes on its committer thread, not the caller's.
  virtual bool AppendsMayBlock() const { return false; }
  // Non-empty while the log serves reads only or otherwise runs degraded.
  virtual std::string DegradedReason() const { return ""; }
};

}  // namespace keel

#endif  // KEEL_CORE_STREAM_LOG_H_
