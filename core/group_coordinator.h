// GroupCoordinator: the ConsumerGroups of a bus (core/consumer_groups.h),
// kept as GroupRecords (core/group_record.h) in the bus's MetadataStore and
// reading events through the bus's Replayer, on the bus's Clock.
//
// Every operation on a group is a read-modify-write of its one record under
// that group's mutex, and a grant is persisted before it is returned, so two
// callers never hold live leases of one group at once and tokens keep
// increasing across restarts (the record carries the last token granted).
// Operations on different groups run in parallel.
//
// Limits: 1..kMaxReplayLimit events per page, leases longer than zero and at
// most kMaxLease; group names follow the stream-name rules.
//
// Thread safety: all methods are safe to call concurrently.
#ifndef KEEL_CORE_GROUP_COORDINATOR_H_
#define KEEL_CORE_GROUP_COORDINATOR_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "keel/core/clock.h"
#include "keel/core/consumer_groups.h"
#include "keel/core/group_record.h"
#include "keel/core/metadata_store.h"
#include "keel/core/mutex.h"
#include "keel/core/replayer.h"

namespace keel {

inline constexpr absl::Duration kMaxLease = absl::Hours(1);

class GroupCoordinator final : public ConsumerGroups {
 public:
  // All three must outlive the coordinator.
  GroupCoordinator(MetadataStore& store, Replayer& replayer, const Clock& clock)
      : store_(store), replayer_(replayer), clock_(clock) {}

  absl::StatusOr<ConsumePage> Consume(const ConsumeRequest& request) override;
  absl::Status Commit(absl::string_view stream, absl::string_view group, const Cursor& cursor,
                      uint64_t token) override;
  absl::Status Seek(absl::string_view stream, absl::string_view group, const Position& at) override;
  absl::Status SeekToTime(absl::string_view stream, absl::string_view group,
                          absl::Time time) override;
  absl::StatusOr<GroupInfo> Describe(absl::string_view stream, absl::string_view group) override;
  absl::StatusOr<std::vector<GroupInfo>> List(absl::string_view stream) override;

 private:
  // The mutex of one group (created on first use, kept for the process).
  Mutex& GroupMutex(absl::string_view stream, absl::string_view group);
  // The group's record, in the store's current epoch (InCurrentEpoch).
  absl::StatusOr<std::optional<GroupRecord>> Load(absl::string_view stream,
                                                  absl::string_view group);
  // Writes `record`, marked as of the store's current epoch.
  absl::Status Store(absl::string_view stream, absl::string_view group, GroupRecord record);
  // Reads the page after the record's cursor; fills `gap` and moves the
  // page's start past trimmed events.
  absl::StatusOr<ReplayPage> ReadPage(const ConsumeRequest& request, uint64_t& from,
                                      std::optional<RetentionGap>& gap);
  absl::Status CheckCommit(absl::string_view stream, const GroupRecord& record,
                           const Cursor& cursor, uint64_t token) const;
  GroupInfo InfoOf(absl::string_view stream, absl::string_view group, const GroupRecord& record,
                   const StreamInfo& info) const;
  Cursor CursorAt(absl::string_view stream, uint64_t sequence) const;

  MetadataStore& store_;
  Replayer& replayer_;
  const Clock& clock_;
  Mutex locks_mu_;
  std::map<std::string, std::unique_ptr<Mutex>, std::less<>> locks_ ABSL_GUARDED_BY(locks_mu_);
};

// kInvalidArgument unless `group` is a valid group name (the stream-name
// rules: [A-Za-z0-9._:-]{1,255}).
absl::Status ValidateGroupName(absl::string_view group);

}  // namespace keel

#endif  // KEEL_CORE_GROUP_COORDINATOR_H_
