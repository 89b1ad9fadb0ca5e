// The durable driver's records of cold segments (rfcs/0008-cold-segments.md,
// "Tiering"), in the same StateStore as the entries they came from.
//
// Keys (after those of key_layout.h; stream names never contain 0x00):
//   "C" <stream> 0x00 <first:u64be>  live segment  (readable; one per segment)
//   "T" <stream>                     tiering intent (at most one per stream)
//   "R" <stream> 0x00 <first:u64be>  retiring segment (expired: its object is
//                                    being deleted; never read again)
//   "S" <stream>                     cold summary   (bounds of the live
//                                    segments, so that open reads one record
//                                    per stream, never the segments)
//
// Values:
//   segment (C, T, R) = version:u8(=1) first:u64be last:u64be epoch:u64be
//                       object_bytes:u64be event_bytes:u64be
//                       min_time:i64be max_time:i64be name_size:u16be name
//                       check:u32be
//   summary (S)       = version:u8(=1) first:u64be segments:u64be
//                       object_bytes:u64be event_bytes:u64be oldest_time:i64be
//                       check:u32be
//   check = 32-bit FNV-1a of the bytes before it; a record that does not
//   decode is kDataLoss naming its key.
//
// Thread safety: pure functions.
#ifndef KEEL_DRIVERS_DURABLE_COLD_LAYOUT_H_
#define KEEL_DRIVERS_DURABLE_COLD_LAYOUT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/statestore/state_store.h"

namespace keel::durable {

// One segment of a stream: entries [first, last], all of store epoch
// `epoch`, in object `object` of the cold store.
struct ColdSegment {
  uint64_t first = 0;
  uint64_t last = 0;
  uint64_t epoch = 0;
  std::string object;
  uint64_t object_bytes = 0;  // The object's size.
  uint64_t event_bytes = 0;   // Its events' Event::ApproximateSize.
  absl::Time min_time = absl::InfinitePast();
  absl::Time max_time = absl::InfinitePast();

  uint64_t count() const { return last - first + 1; }
  friend bool operator==(const ColdSegment&, const ColdSegment&) = default;
};

// What a stream's live segments hold: first == 0 when none.
struct ColdSummary {
  uint64_t first = 0;
  uint64_t segments = 0;
  uint64_t object_bytes = 0;
  uint64_t event_bytes = 0;
  absl::Time oldest_time = absl::InfinitePast();  // The time of event `first`.

  bool empty() const { return segments == 0; }
  friend bool operator==(const ColdSummary&, const ColdSummary&) = default;
};

std::string ColdSegmentKey(absl::string_view stream, uint64_t first);
KeyRange ColdSegmentRange(absl::string_view stream);
std::string TierIntentKey(absl::string_view stream);
KeyRange TierIntentRange();
std::string RetiringSegmentKey(absl::string_view stream, uint64_t first);
KeyRange RetiringSegmentRange();
std::string ColdSummaryKey(absl::string_view stream);
KeyRange ColdSummaryRange();

// The stream named by a "T" or "S" key, and by a "C" or "R" key.
absl::string_view StreamOfNameKey(absl::string_view key);
absl::StatusOr<absl::string_view> StreamOfNumberKey(absl::string_view key);

std::string EncodeColdSegment(const ColdSegment& segment);
// `key` names the record in messages.
absl::StatusOr<ColdSegment> DecodeColdSegment(absl::string_view key, absl::string_view value);
std::string EncodeColdSummary(const ColdSummary& summary);
absl::StatusOr<ColdSummary> DecodeColdSummary(absl::string_view key, absl::string_view value);

}  // namespace keel::durable

#endif  // KEEL_DRIVERS_DURABLE_COLD_LAYOUT_H_
