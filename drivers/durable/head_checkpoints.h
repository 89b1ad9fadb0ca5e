// HeadCheckpoints: which stream heads a durable commit writes
// (rfcs/0003-durable-layout.md, "Head checkpoints").
//
// Writing every touched head in every commit put the same key into every
// LevelDB memtable flush. Those flushes then all overlapped each other and the
// stream's newest table, so LevelDB merged each one twice more instead of
// moving it down the levels, and under 100-event publishes its compactions
// cost about as much CPU as the publishes themselves. So a
// commit writes a stream's head only when the store has none yet, and writes
// every head that lags its entries once the bytes committed since the last
// checkpoint reach `interval_bytes` (or when forced, as the bus closes). The
// bus syncs before writing any head but a stream's first, so that no head
// outlives any of its entries (DurableBus::WriteGroup).
//
// A lagging head is correct, only incomplete: recovery catches it up from
// the entries after it (VerifyTail), so `interval_bytes` bounds what each
// crash adds to the reading of a restart. With `interval_bytes` = 0 every
// commit writes every head it touched.
//
// Thread safety: not thread-safe; used by the committing thread only (the
// group committer never runs two commits at once).
#ifndef KEEL_DRIVERS_DURABLE_HEAD_CHECKPOINTS_H_
#define KEEL_DRIVERS_DURABLE_HEAD_CHECKPOINTS_H_

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace keel::durable {

class HeadCheckpoints {
 public:
  explicit HeadCheckpoints(uint64_t interval_bytes) : interval_bytes_(interval_bytes) {}

  // Whether a commit of `batch_bytes` must write every lagging head.
  bool Due(uint64_t batch_bytes) const {
    return unrecorded_bytes_ + batch_bytes >= interval_bytes_;
  }

  // Streams whose stored head may lag their entries.
  const absl::flat_hash_set<std::string>& lagging() const { return lagging_; }

  // Records a successful commit of `batch_bytes`: a checkpoint (every lagging
  // head written), or a commit that appended to `unwritten` without writing
  // their heads.
  void Committed(bool checkpoint, absl::Span<const absl::string_view> unwritten,
                 uint64_t batch_bytes);
  // `stream` was deleted: it has no head to write.
  void Forget(absl::string_view stream) { lagging_.erase(stream); }

 private:
  const uint64_t interval_bytes_;
  uint64_t unrecorded_bytes_ = 0;  // Committed since the last checkpoint.
  absl::flat_hash_set<std::string> lagging_;
};

}  // namespace keel::durable

#endif  // KEEL_DRIVERS_DURABLE_HEAD_CHECKPOINTS_H_
