// JSON form of a StreamPolicy for PUT/GET /v1/streams/{stream}
// (rfcs/0004-http-api.md):
//
//   {"retention": {"maxAge": "168h", "maxBytes": 1073741824, "maxEvents": 0},
//    "maxPayloadBytes": 131072, "dedupeWindow": "2m",
//    "deadLetterRetention": {"maxAge": "0s", "maxBytes": 0, "maxEvents": 0},
//    "hotRetention": {"maxAge": "0s", "maxBytes": 0, "maxEvents": 0},
//    "partitions": 0}
//
// Every member is optional on input (absent = default); unknown members are
// an error. Values are validated by StreamPolicy::Parse, so the JSON and
// config-file forms accept exactly the same settings.
//
// Thread safety: pure functions.
#ifndef KEEL_CMD_KEEL_SERVER_POLICY_JSON_H_
#define KEEL_CMD_KEEL_SERVER_POLICY_JSON_H_

#include <boost/json/object.hpp>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/core/stream_policy.h"

namespace keel::server {

absl::StatusOr<StreamPolicy> ParsePolicyJson(absl::string_view body);
// The same, from a parsed object (a policy inside another document).
absl::StatusOr<StreamPolicy> ParsePolicyObject(boost::json::object top);
std::string PolicyJson(const StreamPolicy& policy);

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_POLICY_JSON_H_
