// PositionCache: where recently seen records of each stream are (their
// JetStream sequence, by the sequence of their first event), so that
// finding the record that holds a sequence usually searches between two
// known records rather than the whole JetStream sequence range.
//
// Entries are facts about records once stored; a trim may have purged one
// since, which only widens a search (a record below a purged one still
// holds smaller sequences). Bounded: each stream keeps its newest entries.
//
// Thread safety: all methods are safe to call concurrently.
#ifndef KEEL_DRIVERS_JETSTREAM_POSITION_CACHE_H_
#define KEEL_DRIVERS_JETSTREAM_POSITION_CACHE_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "keel/core/mutex.h"

namespace keel::jetstream {

class PositionCache {
 public:
  // Where to look for the record holding a sequence: no record at or below
  // JetStream sequence `after` holds it or a later one, and the record at
  // `at_most` (or the first one after it) holds it or a later one.
  struct Range {
    uint64_t after = 0;
    uint64_t at_most = UINT64_MAX;
  };

  // The record at `js_seq` of `stream` starts at `first`.
  void Note(absl::string_view stream, uint64_t first, uint64_t js_seq);
  Range Around(absl::string_view stream, uint64_t sequence) const;

 private:
  mutable Mutex mu_;
  // Per stream: first sequence -> the smallest JetStream sequence seen with it
  // (a trim marker and the append after it share their first sequence).
  absl::flat_hash_map<std::string, std::map<uint64_t, uint64_t>> streams_ ABSL_GUARDED_BY(mu_);
};

}  // namespace keel::jetstream

#endif  // KEEL_DRIVERS_JETSTREAM_POSITION_CACHE_H_
