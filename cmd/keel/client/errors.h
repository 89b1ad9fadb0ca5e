// Error responses of the Keel HTTP API as absl::Status.
//
// The daemon answers errors with `{"error":{"code","message",...details}}`
// (rfcs/0004-http-api.md). ErrorFromResponse turns such a response into a
// status whose message is "code: message", whose Keel error kind
// (core/errors.h) is the one the code names (kInvalidArgument for
// "invalid_argument", kRetentionGap for "retention_gap", ...; kOther for codes
// without a kind), and which carries the HTTP status, code and raw body for
// GetHttpError.
//
// Thread safety: pure functions.
#ifndef KEEL_CMD_KEEL_CLIENT_ERRORS_H_
#define KEEL_CMD_KEEL_CLIENT_ERRORS_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "keel/cmd/keel/client/http_client.h"

namespace keel::client {

struct HttpError {
  int status = 0;        // HTTP status, e.g. 409.
  std::string code;      // e.g. "cursor_mismatch"; "http_<status>" when the body has none.
  std::string message;   // The server's message.
  std::string body;      // The raw response body (details such as "oldest").
  // The response's Retry-After (a 429 or 503), in seconds; 0 when absent.
  absl::Duration retry_after;
};

// OK for a 2xx response; otherwise the error it describes.
absl::Status ErrorFromResponse(const ClientResponse& response);

// The HTTP details of a status made by ErrorFromResponse; nullopt otherwise.
std::optional<HttpError> GetHttpError(const absl::Status& status);

// Text for a user: "code: message" for a server error (what ErrorFromResponse
// put in the message), the status message otherwise.
std::string DescribeError(const absl::Status& status);

}  // namespace keel::client

#endif  // KEEL_CMD_KEEL_CLIENT_ERRORS_H_
