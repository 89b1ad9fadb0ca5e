// Replayer: reads a stream's history from a cursor.
//
// Replay returns a page of events strictly after a position, optionally up to
// an inclusive `until` cursor, filtered by tenant and type prefix *inside* the
// driver. A page always reports `next`, the position the scan reached, which
// can be further than the last returned event when a filter skipped events;
// passing it back resumes exactly there.
//
// Errors: kInvalidArgument (bad name or limit), kCursorMismatch (cursor of
// another stream or store epoch, or beyond the stream's head), kRetentionGap
// (cursor older than the oldest retained event; details via GetRetentionGap).
//
// Thread safety: all methods are safe to call concurrently with each other and
// with publishes.
#ifndef KEEL_CORE_REPLAYER_H_
#define KEEL_CORE_REPLAYER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "keel/core/cursor.h"
#include "keel/core/event.h"

namespace keel {

// Server-side filter on replay and follow. Empty fields match everything.
struct EventFilter {
  std::string tenant;       // Exact tenant match when non-empty.
  std::string type_prefix;  // Event type starts with this when non-empty.

  bool Matches(const Event& event) const;
  bool empty() const { return tenant.empty() && type_prefix.empty(); }
};

struct ReplayRequest {
  std::string stream;
  Position after = Position::Earliest();
  std::optional<Cursor> until;  // Inclusive upper bound.
  size_t limit = 100;           // 1..kMaxReplayLimit.
  EventFilter filter;
};

inline constexpr size_t kMaxReplayLimit = 10'000;

// An earlier epoch of the store whose cursors still name events of a stream:
// those below `valid_below`. A durable store starts a new epoch when it
// opens after an unsynced crash, which may have lost acknowledged events
// whose sequences are then handed out again (rfcs/0003-durable-layout.md,
// "Epochs"); `valid_below` is the first sequence the stream was given after
// that epoch, or UINT64_MAX when it was given none since. The last entry has
// epoch 0, which no cursor carries: it stands for any epoch older than
// those listed (forgotten ones, and records written before epochs existed),
// whose bound is the stream's first start of all.
struct EarlierEpoch {
  uint64_t epoch = 0;
  uint64_t valid_below = UINT64_MAX;
  friend bool operator==(const EarlierEpoch&, const EarlierEpoch&) = default;
};

// Where a stream stands. For a stream never written: first_sequence = 1,
// last_sequence = 0, count = 0.
struct StreamInfo {
  std::string stream;
  uint64_t first_sequence = 1;  // Oldest retained event.
  uint64_t last_sequence = 0;   // Newest event; 0 when none ever.
  uint64_t count = 0;           // Retained events.
  uint64_t bytes = 0;           // Retained bytes (Event::ApproximateSize).
  absl::Time oldest_time = absl::InfinitePast();
  Cursor head;  // Cursor at last_sequence.
  // Where the stream's current incarnation begins (LogBounds::
  // incarnation_start): a cursor below it names a deleted incarnation
  // (EventBus::DeleteStream) and is a mismatch. 0 for a stream never deleted.
  uint64_t incarnation_start = 0;
  // Empty unless the store had earlier epochs (see EarlierEpoch).
  std::vector<EarlierEpoch> earlier_epochs;
};

struct ReplayPage {
  std::vector<Event> events;
  Cursor next;                 // Resume position: the last sequence scanned.
  uint64_t head_sequence = 0;  // The stream's last sequence when read.
  bool reached_end = false;    // True when the scan reached the head or `until`.
};

class Replayer {
 public:
  virtual ~Replayer() = default;

  virtual absl::StatusOr<ReplayPage> Replay(const ReplayRequest& request) = 0;
  virtual absl::StatusOr<StreamInfo> Bounds(absl::string_view stream) = 0;
  // Streams whose name starts with `prefix`, sorted by name, at most `limit`.
  virtual absl::StatusOr<std::vector<StreamInfo>> ListStreams(absl::string_view prefix,
                                                              size_t limit) = 0;
  // The store epoch that this replayer's cursors carry.
  virtual uint64_t epoch() const = 0;
};

// The entry of `info.earlier_epochs` for `epoch`, or nullptr.
const EarlierEpoch* EarlierEpochOf(const StreamInfo& info, uint64_t epoch);

// Checks that `cursor` names an event of `info.stream` in a store of epoch
// `epoch`: OK for the stream's cursors of `epoch`, and for those of an
// earlier epoch below its `valid_below`; kCursorMismatch otherwise (another
// stream, another store, an event an unsynced crash lost, or a deleted
// incarnation of the stream: below `info.incarnation_start`).
absl::Status CheckCursorFor(const Cursor& cursor, const StreamInfo& info, uint64_t epoch);

// Resolves a Position against a stream: returns the sequence to read after.
// kEarliest -> first_sequence - 1, kLatest -> last_sequence, a cursor -> its
// sequence after checking it (CheckCursorFor), the head and retention.
absl::StatusOr<uint64_t> ResolvePosition(const Position& position, const StreamInfo& info,
                                         uint64_t epoch);

// The cursor at `sequence` of `stream` (0: before its first event), for
// readers that keep sequence numbers (a lakehouse's rows, an application's
// state): checked as ResolvePosition checks a cursor — kRetentionGap below
// the oldest retained event, kCursorMismatch ahead of the head or before
// the stream's current incarnation.
absl::StatusOr<Cursor> CursorAtSequence(Replayer& replayer, absl::string_view stream,
                                        uint64_t sequence);

// kInvalidArgument for a bad stream name or a limit outside 1..kMaxReplayLimit.
absl::Status ValidateReplayRequest(const ReplayRequest& request);

// The last sequence a replay may return: the head, or `until` when it is set
// (after checking that it belongs to the stream and store).
absl::StatusOr<uint64_t> ResolveUntil(const ReplayRequest& request, const StreamInfo& info,
                                      uint64_t epoch);

// The position just before the first event of `stream` published at or after
// `time` (the head when there is none; Position::Earliest() when
// every retained event qualifies). Drivers keep publish times non-decreasing
// within a stream, so this is a binary search of O(log n) one-event reads.
absl::StatusOr<Position> PositionAtTime(Replayer& replayer, absl::string_view stream,
                                        absl::Time time);

// The cursor a reader filtering on `tenant` may persist as its watermark: the
// stream's head. Every event of the tenant up to the head is at or before it,
// so resuming there misses nothing of the tenant, and it never goes stale
// while the tenant is idle. (Filtered replay pages and SSE streams advance
// their `next` cursor / `id:` the same way.)
absl::StatusOr<Cursor> LatestCursor(Replayer& replayer, absl::string_view stream,
                                    absl::string_view tenant);

}  // namespace keel

#endif  // KEEL_CORE_REPLAYER_H_
