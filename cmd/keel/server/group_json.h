// JSON forms of the consumer-group and dead-letter routes
// (rfcs/0005-consumer-groups.md): request bodies in, pages, group infos and
// dead letters out.
//
// Thread safety: pure functions.
#ifndef KEEL_CMD_KEEL_SERVER_GROUP_JSON_H_
#define KEEL_CMD_KEEL_SERVER_GROUP_JSON_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/core/consumer_groups.h"
#include "keel/core/dead_letters.h"

namespace keel::server {

// POST …:consume: {"limit"?, "leaseMs"?, "start"?: "earliest"|"latest"}; an
// empty body takes every default.
absl::StatusOr<ConsumeRequest> ParseConsumeBody(absl::string_view body);

// POST …:commit: {"cursor", "token"}.
struct CommitBody {
  Cursor cursor;
  uint64_t token = 0;
};
absl::StatusOr<CommitBody> ParseCommitBody(absl::string_view body);

// POST …:seek: {"to": "earliest"|"latest"|<cursor>} or {"time": RFC 3339}.
struct SeekBody {
  std::optional<Position> to;
  std::optional<absl::Time> time;
};
absl::StatusOr<SeekBody> ParseSeekBody(absl::string_view body);

std::string ConsumePageJson(const ConsumePage& page, absl::string_view stream, uint64_t epoch);
std::string GroupInfoJson(const GroupInfo& info);
std::string GroupListJson(const std::vector<GroupInfo>& infos);
std::string DeadLetterJson(const DeadLetter& letter, uint64_t epoch);
std::string DeadLetterPageJson(const DeadLetterPage& page, uint64_t epoch);

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_GROUP_JSON_H_
