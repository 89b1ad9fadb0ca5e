#include "keel/cmd/keel/server/push/stale_lease.h"

#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::push {

absl::Status FenceStaleLease(ConsumerGroups& groups, absl::string_view stream,
                             absl::string_view group) {
  absl::StatusOr<GroupInfo> info = groups.Describe(stream, group);
  if (GetErrorKind(info.status()) == ErrorKind::kNotFound) return absl::OkStatus();
  KEEL_RETURN_IF_ERROR(info.status());
  if (!info->lease) return absl::OkStatus();
  absl::Status sought = info->cursor.sequence == 0
                            ? groups.Seek(stream, group, Position::Earliest())
                            : groups.Seek(stream, group, Position::After(info->cursor));
  if (GetErrorKind(sought) == ErrorKind::kRetentionGap) {
    // Trimmed past the cursor: Consume would continue at the oldest event.
    sought = groups.Seek(stream, group, Position::Earliest());
  }
  return sought;
}

}  // namespace keel::push
