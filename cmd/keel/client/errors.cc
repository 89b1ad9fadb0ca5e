#include "keel/cmd/keel/client/errors.h"

#include <boost/json.hpp>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"

namespace keel::client {
namespace {

namespace json = boost::json;

constexpr char kStatusUrl[] = "type.keel.dev/keel.client.http_status";
constexpr char kCodeUrl[] = "type.keel.dev/keel.client.http_code";
constexpr char kMessageUrl[] = "type.keel.dev/keel.client.http_message";
constexpr char kBodyUrl[] = "type.keel.dev/keel.client.http_body";
constexpr char kRetryAfterUrl[] = "type.keel.dev/keel.client.http_retry_after";

struct CodeKind {
  absl::string_view code;
  ErrorKind kind;
};

constexpr CodeKind kCodeKinds[] = {
    {"invalid_argument", ErrorKind::kInvalidArgument},
    {"invalid_cursor", ErrorKind::kInvalidCursor},
    {"not_found", ErrorKind::kNotFound},
    {"cursor_mismatch", ErrorKind::kCursorMismatch},
    {"conflict", ErrorKind::kConflict},
    {"resource_drift", ErrorKind::kResourceDrift},
    {"retention_gap", ErrorKind::kRetentionGap},
    {"payload_too_large", ErrorKind::kPayloadTooLarge},
    {"unavailable", ErrorKind::kUnavailable},
};

absl::StatusCode CodeForHttpStatus(int status) {
  switch (status) {
    case 400:
    case 415:
    case 431:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 405:
    case 501:
      return absl::StatusCode::kUnimplemented;
    case 409:
      return absl::StatusCode::kFailedPrecondition;
    case 410:
      return absl::StatusCode::kOutOfRange;
    case 413:
    case 429:
      return absl::StatusCode::kResourceExhausted;
    case 503:
      return absl::StatusCode::kUnavailable;
    case 504:
      return absl::StatusCode::kDeadlineExceeded;
    default:
      return status >= 500 ? absl::StatusCode::kInternal : absl::StatusCode::kUnknown;
  }
}

// Reads {"error":{"code","message"}}; leaves the outputs alone otherwise.
void ParseErrorBody(absl::string_view body, std::string& code, std::string& message) {
  boost::system::error_code ec;
  json::value root = json::parse(json::string_view(body.data(), body.size()), ec);
  if (ec || !root.is_object()) return;
  const json::value* error = root.get_object().if_contains("error");
  if (error == nullptr || !error->is_object()) return;
  const json::object& object = error->get_object();
  if (const json::value* c = object.if_contains("code"); c != nullptr && c->is_string()) {
    code = std::string(c->get_string());
  }
  if (const json::value* m = object.if_contains("message"); m != nullptr && m->is_string()) {
    message = std::string(m->get_string());
  }
}

std::optional<std::string> Payload(const absl::Status& status, const char* url) {
  auto cord = status.GetPayload(url);
  if (!cord) return std::nullopt;
  return std::string(*cord);
}

}  // namespace

absl::Status ErrorFromResponse(const ClientResponse& response) {
  if (response.ok()) return absl::OkStatus();
  std::string code = absl::StrCat("http_", response.status);
  std::string message = response.body.substr(0, 200);
  ParseErrorBody(response.body, code, message);
  const std::string text = absl::StrCat(code, ": ", message);
  absl::Status status;
  for (const CodeKind& entry : kCodeKinds) {
    if (entry.code == code) status = MakeError(entry.kind, text);
  }
  if (status.ok()) status = absl::Status(CodeForHttpStatus(response.status), text);
  status.SetPayload(kStatusUrl, absl::Cord(absl::StrCat(response.status)));
  status.SetPayload(kCodeUrl, absl::Cord(code));
  status.SetPayload(kMessageUrl, absl::Cord(message));
  status.SetPayload(kBodyUrl, absl::Cord(response.body));
  if (std::string retry_after = response.Header("retry-after"); !retry_after.empty()) {
    status.SetPayload(kRetryAfterUrl, absl::Cord(retry_after));
  }
  return status;
}

std::optional<HttpError> GetHttpError(const absl::Status& status) {
  std::optional<std::string> http_status = Payload(status, kStatusUrl);
  if (!http_status) return std::nullopt;
  HttpError error;
  if (!absl::SimpleAtoi(*http_status, &error.status)) return std::nullopt;
  error.code = Payload(status, kCodeUrl).value_or("");
  error.message = Payload(status, kMessageUrl).value_or("");
  error.body = Payload(status, kBodyUrl).value_or("");
  int64_t retry_after_seconds = 0;  // The delay form; an HTTP date is not sent by Keel.
  if (absl::SimpleAtoi(Payload(status, kRetryAfterUrl).value_or(""), &retry_after_seconds) &&
      retry_after_seconds > 0) {
    error.retry_after = absl::Seconds(retry_after_seconds);
  }
  return error;
}

std::string DescribeError(const absl::Status& status) { return std::string(status.message()); }

}  // namespace keel::client
