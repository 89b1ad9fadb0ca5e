// The durable driver's entry and head records, exported for benchmarks' raw
// baselines; not for programs.
//
// `keel-bench storage` compares the driver with LevelDB alone. For that its
// baselines write, with raw LevelDB, the very keys and values the driver
// writes: events as entries, each stream's head with the stream's first
// events and at head checkpoints, by the driver's own rule. This header
// gives them those bytes and that rule, and nothing else of the driver.
//
// Programs read and write a durable store only through the driver
// (CreateBus("durable", ...)): the layout is the driver's own
// (rfcs/0003-durable-layout.md), these functions write new stores' format
// only, and nothing here checks that a store is one the driver can open.
//
// Thread safety: the functions are pure; a HeadCheckpointRule is used by one
// thread.
#ifndef KEEL_DRIVERS_DURABLE_RAW_LAYOUT_H_
#define KEEL_DRIVERS_DURABLE_RAW_LAYOUT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "keel/core/event.h"

namespace keel::durable {
class HeadCheckpoints;
}  // namespace keel::durable

namespace keel::durable::raw {

// A stream's head: it retains sequences [first, next), of `bytes` in all
// (the sum of their Event::ApproximateSize), the oldest published at
// `oldest_time`.
struct RawHead {
  uint64_t first = 1;
  uint64_t next = 1;
  uint64_t bytes = 0;
  absl::Time oldest_time = absl::InfinitePast();

  uint64_t count() const { return next - first; }
  // Whether the stream had an event: only then has the store a head for it.
  bool started() const { return next > 1; }
};

// The key of `stream`'s entry for `sequence`, and its value for `event` in
// a store the driver created (event.stream and event.sequence are in the
// key, not in the value).
std::string EntryKey(absl::string_view stream, uint64_t sequence);
std::string EntryValue(const Event& event);
// Every entry key starts with these bytes, and no other key does.
std::string EntryKeyPrefix();

// The key and the value of `stream`'s head record.
std::string HeadKey(absl::string_view stream);
std::string HeadValue(const RawHead& head);

// Which heads the driver writes with a commit, at its default head
// checkpoint interval: the heads of streams the commit starts always, and
// every lagging head when the commit is Due (a checkpoint).
class HeadCheckpointRule {
 public:
  HeadCheckpointRule();
  ~HeadCheckpointRule();
  HeadCheckpointRule(const HeadCheckpointRule&) = delete;
  HeadCheckpointRule& operator=(const HeadCheckpointRule&) = delete;

  // Whether a commit of `batch_bytes` (its entries' keys and values) is a
  // checkpoint.
  bool Due(uint64_t batch_bytes) const;
  // Whether `stream`'s stored head may lag its entries.
  bool Lagging(absl::string_view stream) const;
  // Records a commit: a checkpoint, or one that appended to `unwritten`
  // without writing their heads.
  void Committed(bool checkpoint, absl::Span<const absl::string_view> unwritten,
                 uint64_t batch_bytes);

 private:
  const std::unique_ptr<HeadCheckpoints> checkpoints_;
};

}  // namespace keel::durable::raw

#endif  // KEEL_DRIVERS_DURABLE_RAW_LAYOUT_H_
