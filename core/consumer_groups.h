// ConsumerGroups: durable, leased read positions per (stream, group).
//
// A group has one committed cursor per stream and hands its stream out in
// leased pages, like a Kafka partition read by one member at a time:
//
//   Consume(stream, group, limit, lease)  the events after the committed
//       cursor, plus a lease on them with a fencing token that is larger than
//       every token granted before (also across restarts). While a lease is
//       live, other Consume calls get an empty page and `busy_until`.
//   Commit(stream, group, cursor, token)  moves the cursor forward (never
//       back) to a position inside the leased page and ends the lease. A
//       token older than the newest grant is refused with kConflict: a
//       consumer whose lease expired and was granted to another can no longer
//       commit. A lease that expired without a new grant may still commit.
//   Seek(stream, group, position)  sets the cursor (earliest, latest, a
//       cursor or a time) and fences the current lease.
//
// An expired lease's page is delivered again (at-least-once). A new group
// starts at `earliest`, or `latest` when ConsumeRequest::start says so. When
// retention trimmed events a group had not read, Consume continues at the
// oldest retained event and reports the gap in the page.
//
// Group cursors live in the bus's MetadataStore, so they survive a restart
// when the bus's events do.
//
// Thread safety: all methods are safe to call concurrently.
#ifndef KEEL_CORE_CONSUMER_GROUPS_H_
#define KEEL_CORE_CONSUMER_GROUPS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/core/cursor.h"
#include "keel/core/errors.h"
#include "keel/core/event.h"

namespace keel {

struct ConsumeRequest {
  std::string stream;
  std::string group;  // [A-Za-z0-9._:-]{1,255}, like stream names.
  size_t limit = 100;
  absl::Duration lease = absl::Seconds(30);
  // Where a group seen for the first time starts.
  enum class Start { kEarliest, kLatest };
  Start start = Start::kEarliest;
};

struct GroupLease {
  uint64_t token = 0;  // Zero: no lease was granted.
  absl::Time expires = absl::InfinitePast();
  Cursor from;  // The committed cursor when granted: the page starts after it.
  Cursor to;    // The last event of the page: commit this to finish it.
};

struct ConsumePage {
  std::vector<Event> events;
  GroupLease lease;
  // Set when another consumer holds a live lease: no events, no lease.
  std::optional<absl::Time> busy_until;
  // Set when retention trimmed events after the group's cursor.
  std::optional<RetentionGap> gap;
};

struct GroupInfo {
  std::string stream;
  std::string group;
  Cursor cursor;         // Committed position.
  uint64_t lag = 0;      // Events after the cursor up to the stream's head.
  uint64_t last_token = 0;
  std::optional<GroupLease> lease;  // The live lease, if any.
};

class ConsumerGroups {
 public:
  virtual ~ConsumerGroups() = default;

  virtual absl::StatusOr<ConsumePage> Consume(const ConsumeRequest& request) = 0;
  virtual absl::Status Commit(absl::string_view stream, absl::string_view group,
                              const Cursor& cursor, uint64_t token) = 0;
  // `at` is earliest, latest or a cursor; SeekToTime positions the group
  // before the first event published at or after `time`.
  virtual absl::Status Seek(absl::string_view stream, absl::string_view group,
                            const Position& at) = 0;
  virtual absl::Status SeekToTime(absl::string_view stream, absl::string_view group,
                                  absl::Time time) = 0;
  // kNotFound for a group that never consumed, committed or sought.
  virtual absl::StatusOr<GroupInfo> Describe(absl::string_view stream,
                                             absl::string_view group) = 0;
  // Every group of `stream` (every stream when empty), sorted.
  virtual absl::StatusOr<std::vector<GroupInfo>> List(absl::string_view stream) = 0;
};

}  // namespace keel

#endif  // KEEL_CORE_CONSUMER_GROUPS_H_
