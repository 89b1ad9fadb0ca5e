// StreamWriter: one daemon's writer of one Keel stream. It appends records
// to the stream's subject with conditional publishes (drivers/jetstream/
// claim.h), so that writers of every daemon serving the bus take turns:
// each append claims the slot after the record its writer last saw, and a
// writer that lost the slot reads the records it missed and plans again.
//
// Its state is what it folded from the subject in order — the newest record
// and the idempotency keys of the stream's dedupe window — so a publish is
// planned (core/append_plan.h) against the whole stream as of the record
// its claim follows, whoever wrote the rest. A record that does not
// continue the one before it is kDataLoss.
//
// Publishes to one stream that queue while its writer is busy go into one
// record together (each still all or nothing, planned in queue order), so
// that a hot stream is not limited to one round trip per publish.
//
// Trims are records too: a marker that moves the stream's first retained
// sequence, claimed like an append, after which the records wholly below it
// are purged from JetStream.
//
// Thread safety: all methods are safe to call concurrently; one stream's
// appends and trims run one at a time on a daemon.
#ifndef KEEL_DRIVERS_JETSTREAM_STREAM_WRITER_H_
#define KEEL_DRIVERS_JETSTREAM_STREAM_WRITER_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "keel/core/append_plan.h"
#include "keel/core/clock.h"
#include "keel/core/dedupe_table.h"
#include "keel/core/event_bus.h"
#include "keel/core/mutex.h"
#include "keel/core/stream_policy.h"
#include "keel/drivers/jetstream/claim.h"
#include "keel/drivers/jetstream/jetstream_api.h"
#include "keel/drivers/jetstream/record_reader.h"
#include "keel/drivers/jetstream/wake_signal.h"

namespace keel::jetstream {

// What every writer of a bus shares.
struct WriterEnv {
  JetStreamApi& api;
  RecordReader& reader;
  const BusLayout& layout;
  const Clock& clock;
  ClaimTimeouts claim_timeouts;
  size_t max_record_bytes;  // The server's largest message.
  uint64_t epoch;           // Of the receipts' cursors.
  // When not 0, an append that leaves more events in its stream trims the
  // oldest at once.
  uint64_t max_events_per_stream;
};

// A record a writer stored (an append or a trim marker).
struct WrittenRecord {
  uint64_t js_seq = 0;  // 0: nothing was written.
  RecordHeader header;
};

struct AppendResult {
  std::vector<Receipt> receipts;
  WrittenRecord written;
  WrittenRecord trimmed;  // The marker of max_events_per_stream's trim, if any.
  absl::Time next_key_expiry = absl::InfiniteFuture();
};

struct TrimResult {
  uint64_t events = 0;
  uint64_t bytes = 0;
  WrittenRecord written;
  // Whether the trimmed records' space was freed (the trim itself holds
  // either way).
  absl::Status purge;
};

class StreamWriter {
 public:
  StreamWriter(std::string stream, WriterEnv& env);

  // Appends `events` (validated; stream, id and time set) as the stream's
  // next sequences. Publish times are raised to the stream's newest one.
  absl::StatusOr<AppendResult> Append(std::vector<Event> events, const AppendRequest& request);
  // Cuts the oldest events while the stream is over `limits`, at most
  // `budget` of them. `window` is the stream's idempotency window (for
  // keys folded on the way).
  absl::StatusOr<TrimResult> Trim(const RetentionLimits& limits, absl::Time now, uint64_t budget,
                                  absl::Duration window);
  // Forgets idempotency keys expired at `now`; returns how many.
  size_t CollectKeys(absl::Time now);
  absl::Time NextKeyExpiry();

 private:
  // One publish waiting for, or planned into, a record.
  struct QueuedAppend {
    std::vector<Event> events;
    AppendRequest request;
    size_t bytes = 0;
    bool done = false;  // Set by the leader once `result` holds the answer.
    // Posted once: by the leader that answered it (`done`), or by the one
    // that hands it the lead.
    WakeSignal wake;
    absl::StatusOr<AppendResult> result = AppendResult{};
    // The leader's planning.
    std::optional<AppendPlan> plan;
    std::vector<Event> planned;  // `events` with the planned sequences and times.
  };

  // Appends the publishes of `group` as one record; answers each.
  void CommitLocked(const std::vector<QueuedAppend*>& group) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads the stream's head (checking that it continues the record its
  // slot names) and the keys of the last `window`.
  absl::Status LoadLocked(absl::Duration window) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Folds the records after the tip; true when one of them carries `claim`.
  absl::StatusOr<bool> RefreshLocked(absl::Duration window, absl::string_view claim)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status FoldLocked(const StoredRecord& record, absl::Duration window)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status RememberKeysLocked(const StoredRecord& record, absl::Duration window)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckHeadLocked(const StoredRecord& head) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Claims the slot after the tip for `header`/`data`; on success the tip
  // is the new record. False when the slot was taken (the tip then holds
  // what was read since).
  absl::StatusOr<bool> ClaimNextLocked(RecordHeader header, std::string data, absl::Duration window)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<TrimResult> TrimLocked(const RetentionLimits& limits, absl::Time now,
                                        uint64_t budget, absl::Duration window)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string stream_;
  const std::string subject_;
  WriterEnv& env_;

  // Publishes wait here; the one at the front leads while none does, and
  // a leader that is done hands the lead to the new front.
  Mutex queue_mu_;
  std::deque<QueuedAppend*> queue_ ABSL_GUARDED_BY(queue_mu_);
  bool leading_ ABSL_GUARDED_BY(queue_mu_) = false;

  Mutex mu_;  // The stream's state; held by a leader through its commit.
  bool loaded_ ABSL_GUARDED_BY(mu_) = false;
  RecordRef tip_ ABSL_GUARDED_BY(mu_);
  DedupeTable keys_ ABSL_GUARDED_BY(mu_);
};

}  // namespace keel::jetstream

#endif  // KEEL_DRIVERS_JETSTREAM_STREAM_WRITER_H_
