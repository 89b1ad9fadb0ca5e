// CommitHook: what an append computes at its commit point, on the engine's
// committing thread (core/log_bus.h), in the order appends commit — the
// state a collection's write reads (`before`, the version) and the records
// it stores in the same atomic write as its events (core/collections.h).
//
// Thread safety: Prepare runs on the publisher's thread; Stage and Done run
// on the committing thread only, one append at a time, in commit order.
#ifndef KEEL_CORE_COMMIT_HOOK_H_
#define KEEL_CORE_COMMIT_HOOK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "keel/core/event.h"

namespace keel {

// A MetadataStore record (core/metadata_store.h) to put in the same atomic
// write as an append's events. Its key starts with StreamRecordPrefix of
// the append's stream: the records belong to that stream, and deleting the
// stream deletes them with its events, on the committing thread, so that
// no append commits a record between the two.
struct LogRecord {
  std::string key;
  std::string value;
};

// "doc/<stream>/": where the records of appends to `stream` live.
inline std::string StreamRecordPrefix(absl::string_view stream) {
  return absl::StrCat("doc/", stream, "/");
}

// Whether Stage left the events as Prepare completed them (so that their
// encoding, made on the publisher's thread, still holds) or rewrote them.
enum class StagedEvents { kAsPrepared, kRewritten };

class CommitHook {
 public:
  // After the append was checked, before its events are encoded: completes
  // them as Stage would if the state it reads stays as it is now, so that
  // the committing thread, which runs one append at a time, only has to
  // confirm it.
  virtual void Prepare(absl::Span<Event> events) { (void)events; }
  // `events` carry their sequences and times; the stream's current
  // incarnation holds the sequences after `incarnation_start`, so records
  // that name an earlier one are the deleted incarnation's. Completes the
  // events (their payloads may change) and adds the records to store with
  // them; an error refuses this append alone: it stores nothing and
  // consumes no sequence.
  virtual absl::StatusOr<StagedEvents> Stage(absl::Span<Event> events,
                                             uint64_t incarnation_start,
                                             std::vector<LogRecord>& records) = 0;
  // After the write of a staged append: `stored` says whether it holds.
  virtual void Done(bool stored) = 0;

 protected:
  ~CommitHook() = default;
};

}  // namespace keel

#endif  // KEEL_CORE_COMMIT_HOOK_H_
