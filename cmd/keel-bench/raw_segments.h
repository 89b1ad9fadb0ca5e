// The raw read rates of a directory of cold segment files (the `fs` cold
// store's objects), the ceiling of a replay from cold: reading the same
// bytes with read(2) alone, and reading them and decoding every segment
// (DecodeSegment: every checksum, every entry) with nothing else of Keel.
//
// Used by `keel-bench cold`.
//
// Thread safety: the functions are safe to call concurrently.
#ifndef KEEL_CMD_KEEL_BENCH_RAW_SEGMENTS_H_
#define KEEL_CMD_KEEL_BENCH_RAW_SEGMENTS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace keel::bench {

struct SegmentsRead {
  uint64_t files = 0;
  uint64_t bytes = 0;
  uint64_t events = 0;  // Decoded entries (0 for a read without decoding).
  double seconds = 0;
};

// Every `*.seg` file under `dir`, in name order (a stream's segments in
// sequence order), read whole with read(2) in 1 MiB calls.
absl::StatusOr<SegmentsRead> ReadSegmentFiles(const std::string& dir);

// The same files read and decoded with DecodeSegment; a segment that does
// not decode is its error.
absl::StatusOr<SegmentsRead> DecodeSegmentFiles(const std::string& dir);

}  // namespace keel::bench

#endif  // KEEL_CMD_KEEL_BENCH_RAW_SEGMENTS_H_
