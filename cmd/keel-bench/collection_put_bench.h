// The collections case of `keel-bench export`: Collection::Put against
// plain publishes of the same documents, on one durable bus of the same
// run (rfcs/0009-collections.md).
//
// W writers (4) each write their share of N documents' versions (100,000
// writes over 10,000 ids: an insert each, then updates), once as
// Collections::Put into a collection and once as single-event Publish of
// the document to a plain stream, alternating over R rounds with a fresh
// collection and stream each. A Put stores more than a publish — the
// document record beside the event, and an event that carries `before` and
// `after` — and reads the current record at its commit point: the ratio
// says what that costs. Target: Put >= 0.7x the publishes.
//
// Thread safety: runs on the calling thread and its own writer threads.
#ifndef KEEL_CMD_KEEL_BENCH_COLLECTION_PUT_BENCH_H_
#define KEEL_CMD_KEEL_BENCH_COLLECTION_PUT_BENCH_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "keel/cmd/keel-bench/bench_report.h"

namespace keel::bench {

struct CollectionPutOptions {
  uint64_t writes = 100'000;
  uint64_t ids = 10'000;
  uint64_t payload_bytes = 256;
  int writers = 4;
  int rounds = 3;
};

// Runs the case on a durable bus (LevelDB, sync=none) in `dir`, printing
// each round to `out`; the table row.
absl::StatusOr<ResultRow> RunCollectionPutCase(const std::string& dir,
                                               const CollectionPutOptions& options,
                                               std::ostream& out);

}  // namespace keel::bench

#endif  // KEEL_CMD_KEEL_BENCH_COLLECTION_PUT_BENCH_H_
