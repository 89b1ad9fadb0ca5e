// EpochHistory: the store's epochs and where each stream's sequences start
// in the later ones, so that cursors handed out before an unsynced crash
// keep working exactly as far as the events they name survived.
//
// A durable store starts a new epoch when it opens after a crash of a
// process that acknowledged unsynced writes (sync=interval or none): those
// writes may be lost, and the sequences they had are then given to new
// events. Within one epoch a sequence names one event. A stream's first
// publish in a later epoch records its first sequence there (an "epoch
// start", written in the same atomic write as that sequence's entry); a
// cursor of an earlier epoch is good below the first start that follows
// its epoch, and past it the reader gets kCursorMismatch instead of silently
// missing the events that took the lost sequences
// (rfcs/0003-durable-layout.md, "Epochs").
//
// Thread safety: thread-safe. Stores without earlier epochs take no lock.
#ifndef KEEL_DRIVERS_DURABLE_EPOCH_HISTORY_H_
#define KEEL_DRIVERS_DURABLE_EPOCH_HISTORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "keel/core/mutex.h"
#include "keel/core/replayer.h"
#include "keel/drivers/durable/key_layout.h"

namespace keel::durable {

// Each stream's starts, in no particular order.
using EpochStarts = absl::flat_hash_map<std::string, std::vector<EpochStart>>;

class EpochHistory {
 public:
  // `earlier`: oldest first, as in StoreMeta. `starts`: as read at open,
  // each of an epoch in `earlier` or the current one (Recover checks it).
  EpochHistory(uint64_t epoch, std::vector<uint64_t> earlier, EpochStarts starts);

  // Whether `stream` must record its start before it is given a sequence
  // in the current epoch: the store has earlier epochs and the stream has
  // no start in this one yet.
  bool NeedsStart(absl::string_view stream) const;
  // Records a start once the write that holds it has succeeded.
  void Started(absl::string_view stream, uint64_t first);
  // The earlier epochs with the bound below which their cursors name
  // events of `stream` (empty in a store with one epoch).
  std::vector<EarlierEpoch> CursorBounds(absl::string_view stream) const;

  // The epoch that gave `stream` its `sequence`, and the first sequence
  // of the stream's next epoch (UINT64_MAX when none): a cold segment
  // never spans one.
  struct Span {
    uint64_t epoch = 0;
    uint64_t end = UINT64_MAX;
  };
  Span SpanOf(absl::string_view stream, uint64_t sequence) const;

 private:
  // Position of `epoch` in the store's epochs (the current one last).
  size_t IndexOf(uint64_t epoch) const;

  const uint64_t epoch_;
  const std::vector<uint64_t> earlier_;
  mutable Mutex mu_;
  EpochStarts starts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace keel::durable

#endif  // KEEL_DRIVERS_DURABLE_EPOCH_HISTORY_H_
