// Mapping of Keel errors to HTTP status codes and JSON error bodies
// `{"error":{"code","message",...details}}` (rfcs/0004-http-api.md).
//
// Thread safety: pure functions.
#ifndef KEEL_CMD_KEEL_SERVER_HTTP_ERRORS_H_
#define KEEL_CMD_KEEL_SERVER_HTTP_ERRORS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "keel/cmd/keel/server/http_types.h"

namespace keel::server {

struct HttpErrorCode {
  int status;
  std::string code;  // e.g. "retention_gap"
};

HttpErrorCode ToHttpErrorCode(const absl::Status& status);

// A JSON error response. `details` is extra JSON members without braces
// (e.g. "\"oldest\":\"...\""), or empty.
HttpResponse ErrorResponse(int status, absl::string_view code, absl::string_view message,
                           absl::string_view details = "");
HttpResponse ErrorResponse(const absl::Status& status, absl::string_view details = "");
// ErrorResponse with the details of errors that carry them: a retention gap
// (cursors of `stream` in a store of `epoch`: requested, oldest, resume, plus
// oldestSequence and missed) and a conflict (expected, actual).
HttpResponse ErrorResponseWithDetails(const absl::Status& status, absl::string_view stream,
                                      uint64_t epoch);

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_HTTP_ERRORS_H_
