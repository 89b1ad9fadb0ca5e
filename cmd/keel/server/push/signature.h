// Push request signatures (rfcs/0010-push-subscriptions.md, "Verifying a
// delivery"): HMAC-SHA256, keyed by a subscription's signing secret, over
//
//     <Keel-Timestamp> "." <request body>
//
// where Keel-Timestamp is the request's send time in Unix seconds
// (decimal). The Keel-Signature header carries one "v1=<64 lower-case hex>"
// per signing secret, comma-separated: while a secret rotates, two are
// valid and a receiver that knows either accepts. A receiver recomputes the
// HMAC with its secret, compares in constant time and rejects timestamps
// further than its tolerance from its clock (replays).
//
// Thread safety: pure functions.
#ifndef KEEL_CMD_KEEL_SERVER_PUSH_SIGNATURE_H_
#define KEEL_CMD_KEEL_SERVER_PUSH_SIGNATURE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace keel::push {

inline constexpr char kSignatureHeader[] = "Keel-Signature";
inline constexpr char kTimestampHeader[] = "Keel-Timestamp";

// Lower-case hex HMAC-SHA256 of "<timestamp>.<body>" keyed by `secret`.
std::string SignPayload(absl::string_view secret, int64_t timestamp, absl::string_view body);

// The Keel-Signature value: "v1=<hex>" for each secret, in order, joined by ",".
std::string SignatureHeaderValue(const std::vector<std::string>& secrets, int64_t timestamp,
                                 absl::string_view body);

// What a receiver does: OK when some "v1=" entry of `header` is the HMAC of
// `timestamp` and `body` under `secret` and the timestamp lies within
// `tolerance` of `now`; kUnauthenticated otherwise, saying which check failed.
absl::Status VerifySignature(absl::string_view secret, absl::string_view header,
                             absl::string_view timestamp, absl::string_view body, absl::Time now,
                             absl::Duration tolerance = absl::Minutes(5));

}  // namespace keel::push

#endif  // KEEL_CMD_KEEL_SERVER_PUSH_SIGNATURE_H_
