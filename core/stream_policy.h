// StreamPolicy: what a stream declaration fixes — retention bounds, the
// payload limit, the idempotency window, the dead-letter stream's retention
// and, for a topic, its partition count.
//
// A policy has a one-line text form, "key=value key=value ...", used by the
// daemon's config file (`declare = orders max_age=7d partitions=4`), by the
// CLI and to persist declarations. Unknown keys, bad values and repeated keys
// are kInvalidArgument naming the key. Keys (0 = unbounded for the bounds):
//
//   max_age=DURATION  max_bytes=BYTES  max_events=N      retention (in all,
//                             cold segments included)
//   hot.max_age=DURATION  hot.max_bytes=BYTES  hot.max_events=N
//                             the hot window: past it, events move to cold
//                             segments when the bus has a cold store
//                             (rfcs/0008-cold-segments.md); none: kept hot
//   max_payload_bytes=BYTES   (default 131072, envelope included)
//   dedupe_window=DURATION    (default 2m; 0 disables idempotency keys' dedupe)
//   dead_letter.max_age=DURATION  dead_letter.max_bytes=BYTES
//   dead_letter.max_events=N  retention of the stream's dead-letter stream
//   partitions=N              a topic of streams name:0 .. name:N-1
//
// BYTES accepts a KiB/MiB/GiB suffix. Durations use absl's syntax (250ms,
// 2m, 7d is written 168h).
//
// Thread safety: value types and pure functions.
#ifndef KEEL_CORE_STREAM_POLICY_H_
#define KEEL_CORE_STREAM_POLICY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace keel {

struct RetentionLimits {
  absl::Duration max_age = absl::ZeroDuration();  // Zero: no age bound.
  uint64_t max_bytes = 0;                         // Zero: no byte bound.
  uint64_t max_events = 0;                        // Zero: no count bound.

  bool unbounded() const {
    return max_age == absl::ZeroDuration() && max_bytes == 0 && max_events == 0;
  }
  // True when a stream holding `count` events of `bytes` whose oldest was
  // published at `oldest_time` exceeds a bound at `now`.
  bool Exceeded(uint64_t count, uint64_t bytes, absl::Time oldest_time, absl::Time now) const;
  friend bool operator==(const RetentionLimits&, const RetentionLimits&) = default;
};

inline constexpr uint64_t kDefaultMaxPayloadBytes = 128 * 1024;
inline constexpr absl::Duration kDefaultDedupeWindow = absl::Minutes(2);
inline constexpr uint32_t kMaxPartitions = 4096;

struct StreamPolicy {
  RetentionLimits retention;
  uint64_t max_payload_bytes = kDefaultMaxPayloadBytes;
  absl::Duration dedupe_window = kDefaultDedupeWindow;
  RetentionLimits dead_letter_retention;
  uint32_t partitions = 0;  // Zero: a plain stream.
  // The hot window; unbounded: every retained event stays hot.
  RetentionLimits hot;

  // Parses the text form; keys not given keep their defaults.
  static absl::StatusOr<StreamPolicy> Parse(absl::string_view text);
  // The text form with every key, in a fixed order (Parse(ToString()) == *this).
  std::string ToString() const;

  friend bool operator==(const StreamPolicy&, const StreamPolicy&) = default;
};

// The keys whose values differ between `a` and `b`, in text-form order, e.g.
// {"max_age", "partitions"}; empty when the policies are equal.
std::vector<std::string> DifferingFields(const StreamPolicy& a, const StreamPolicy& b);

// A declaration as written in a config file: "<stream> key=value ...".
struct StreamDeclaration {
  std::string stream;
  StreamPolicy policy;

  static absl::StatusOr<StreamDeclaration> Parse(absl::string_view text);
};

}  // namespace keel

#endif  // KEEL_CORE_STREAM_POLICY_H_
