#include "keel/cmd/keel/client/follow.h"

#include <algorithm>
#include <memory>
#include <optional>

#include <boost/json.hpp>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/client/errors.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/cmd/keel/client/sse_reader.h"
#include "keel/core/backoff.h"
#include "keel/core/errors.h"

namespace keel::client {
namespace {

namespace json = boost::json;

// 4xx answers are final: the request itself is wrong. Except 429: the
// daemon's rate limit, which a later attempt passes.
bool IsFinal(const absl::Status& status) {
  std::optional<HttpError> http = GetHttpError(status);
  return http.has_value() && http->status >= 400 && http->status < 500 && http->status != 429;
}

// The wait the daemon asked for (Retry-After), if any.
absl::Duration AskedWait(const absl::Status& status) {
  std::optional<HttpError> http = GetHttpError(status);
  return http.has_value() ? http->retry_after : absl::ZeroDuration();
}

// The stream's head cursor (GET /v1/streams/{stream}).
absl::StatusOr<std::string> HeadCursor(const std::string& host, uint16_t port,
                                       const FollowOptions& options) {
  ClientOptions client_options;
  client_options.connect_timeout = options.connect_timeout;
  client_options.request_timeout = options.connect_timeout;
  client_options.token = options.token;
  client_options.tls = options.tls;
  HttpClient http(host, port, client_options);
  absl::StatusOr<ClientResponse> response = http.Get(BuildTarget({"v1", "streams", options.stream}));
  if (!response.ok()) return response.status();
  if (absl::Status error = ErrorFromResponse(*response); !error.ok()) return error;
  boost::system::error_code ec;
  json::value root = json::parse(response->body, ec);
  const json::value* head = !ec && root.is_object() ? root.get_object().if_contains("head") : nullptr;
  if (head == nullptr || !head->is_string()) {
    return absl::InternalError(absl::StrCat("bounds of '", options.stream, "' carry no head cursor"));
  }
  return std::string(head->get_string());
}

// The `resume` cursor of a keel.gap frame (rfcs/0004-http-api.md §7).
std::optional<std::string> GapResume(const std::string& data) {
  boost::system::error_code ec;
  json::value root = json::parse(data, ec);
  if (ec || !root.is_object()) return std::nullopt;
  const json::value* resume = root.get_object().if_contains("resume");
  if (resume == nullptr || !resume->is_string() || resume->get_string().empty()) return std::nullopt;
  return std::string(resume->get_string());
}

}  // namespace

absl::Status FollowStream(const std::string& host, uint16_t port, FollowOptions options,
                          const std::function<bool(const SseFrame&)>& on_frame) {
  auto stopped = [&options] { return options.stop && options.stop(); };
  std::string resume = options.last_event_id;  // Last id seen, or the start cursor.
  std::string after = options.after;
  absl::Duration base = options.default_retry;
  int failures = 0;
  while (!stopped()) {
    bool delivered = false;
    absl::Status ended = [&]() -> absl::Status {
      if (resume.empty() && options.after_time.empty() && (after.empty() || after == "latest")) {
        absl::StatusOr<std::string> head = HeadCursor(host, port, options);
        if (!head.ok()) return head.status();
        resume = *head;
      }
      SseOptions sse;
      sse.stream = options.stream;
      sse.last_event_id = resume;
      sse.after = resume.empty() && options.after_time.empty() ? after : "";
      sse.after_time = resume.empty() ? options.after_time : "";
      sse.tenant = options.tenant;
      sse.type = options.type;
      sse.connect_timeout = options.connect_timeout;
      sse.token = options.token;
      sse.tls = options.tls;
      absl::StatusOr<std::unique_ptr<SseReader>> reader = SseReader::Open(host, port, sse);
      if (!reader.ok()) return reader.status();
      while (true) {
        absl::StatusOr<SseFrame> frame = (*reader)->Next(options.poll_interval);
        if (absl::IsDeadlineExceeded(frame.status())) {
          if (stopped()) return absl::OkStatus();
          continue;
        }
        if (!frame.ok()) return frame.status();
        if (frame->retry_ms) base = absl::Milliseconds(*frame->retry_ms);
        if (frame->id) resume = *frame->id;
        if (frame->event == "keel.gap") {
          // The gap is reported once: resume after it, at the oldest retained event.
          if (std::optional<std::string> after_gap = GapResume(frame->data)) resume = *after_gap;
        }
        if (!frame->IsEvent()) continue;
        delivered = true;
        if (!on_frame(*frame) || stopped()) return absl::OkStatus();
      }
    }();
    if (ended.ok()) return absl::OkStatus();
    if (IsFinal(ended)) return ended;
    failures = delivered ? 1 : failures + 1;
    if (failures > options.max_retries) {
      return absl::Status(ended.code(),
                          absl::StrCat(ended.message(), " (gave up after ",
                                       options.max_retries, " reconnect attempts)"));
    }
    const absl::Duration wait =
        std::max(Backoff{base, 2.0, options.max_backoff}.Delay(failures), AskedWait(ended));
    if (options.on_reconnect) options.on_reconnect(ended, wait, failures);
    const absl::Time until = absl::Now() + wait;
    while (absl::Now() < until && !stopped()) {
      absl::SleepFor(std::min(options.poll_interval, until - absl::Now()));
    }
  }
  return absl::OkStatus();
}

}  // namespace keel::client
