// Optional fields of the JSON request bodies (publish, group consume/commit/
// seek) and the RFC 3339 times of requests, read one way everywhere: an
// absent or null field is nullopt, a field of the wrong kind is
// kInvalidArgument "<where><key> must be ...".
//
// Thread safety: pure functions.
#ifndef KEEL_CMD_KEEL_SERVER_JSON_FIELDS_H_
#define KEEL_CMD_KEEL_SERVER_JSON_FIELDS_H_

#include <cstdint>
#include <optional>
#include <string>

#include <boost/json/object.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace keel::server {

absl::StatusOr<std::optional<std::string>> OptionalJsonString(const boost::json::object& object,
                                                              absl::string_view key,
                                                              absl::string_view where = "");

// A non-negative integer.
absl::StatusOr<std::optional<uint64_t>> OptionalJsonUint(const boost::json::object& object,
                                                         absl::string_view key,
                                                         absl::string_view where = "");

// kInvalidArgument "<field> must be an RFC 3339 time: ..." when `text` is not one.
absl::StatusOr<absl::Time> ParseRfc3339(absl::string_view text, absl::string_view field);

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_JSON_FIELDS_H_
