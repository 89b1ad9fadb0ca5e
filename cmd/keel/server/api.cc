#include "cmd/keel/server/api.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cmd/keel/server/api_helpers.h"
#include "cmd/keel/server/json_fields.h"
#include "cmd/keel/server/groups_api.h"
#include "cmd/keel/server/http_errors.h"
#include "cmd/keel/server/json_codec.h"
#include "cmd/keel/server/policy_json.h"
#include "cmd/keel/server/publish_body.h"
#include "core/topic.h"
#include "core/errors.h"
#include "core/publish_validation.h"
#include "core/status_macros.h"

namespace keel::server {
namespace {

constexpr size_t kDefaultPageLimit = 100;
constexpr size_t kDefaultListLimit = 1000;

EventFilter FilterOf(const HttpRequest& request) {
  return EventFilter{std::string(request.Query("tenant")), std::string(request.Query("type"))};
}

}  // namespace

HttpResponse Api::Handle(const HttpRequest& request) {
  metrics_.CountRequest();
  return Guarded([&] { return Route(request); });
}

HttpResponse Api::Guarded(absl::FunctionRef<HttpResponse()> handler) {
  try {
    return Counted(handler());
  } catch (const std::exception& e) {  // From the driver: see the class comment.
    return Thrown(e);
  }
}

HttpResponse Api::Thrown(const std::exception& e) {
  return Counted(ErrorResponse(ExceptionStatus(e)));
}

HttpResponse Api::Counted(HttpResponse response) {
  if (response.status >= 400) {
    // The code is inside the body; recover it cheaply for the metric.
    size_t at = response.body.find("\"code\":\"");
    if (at != std::string::npos) {
      size_t end = response.body.find('"', at + 8);
      metrics_.CountError(absl::string_view(response.body).substr(at + 8, end - at - 8));
    }
  }
  return response;
}

HttpResponse Api::Route(const HttpRequest& request) {
  const auto& s = request.segments;
  const std::string& method = request.method;
  if (method == "OPTIONS" && !s.empty() && s[0] == "v1") {
    // CORS preflight (e.g. a browser POSTing application/json). The session
    // adds Access-Control-Allow-Origin (--cors-origin) to every response.
    HttpResponse response;
    response.status = 204;
    response.headers = {
        {"Access-Control-Allow-Methods", "GET, POST, PUT, OPTIONS"},
        {"Access-Control-Allow-Headers",
         "Authorization, Content-Type, Idempotency-Key, Last-Event-ID, Keel-Expected-Last-Sequence"},
        {"Access-Control-Max-Age", "600"}};
    return response;
  }
  if (s.size() == 1 && (s[0] == "healthz" || s[0] == "readyz" || s[0] == "metrics")) {
    if (method != "GET") return MethodNotAllowed("GET");
    if (s[0] == "healthz") return JsonResponse(200, "{\"status\":\"ok\"}");
    if (s[0] == "readyz") return Ready();
    HttpResponse response = JsonResponse(200, metrics_.Render() + GroupLagMetrics(bus_));
    response.content_type = "text/plain; version=0.0.4";
    return response;
  }
  if (s.size() < 2 || s[0] != "v1" || s[1] != "streams") {
    return ErrorResponse(404, "not_found", absl::StrCat("no route for ", request.path));
  }
  if (s.size() == 2) return method == "GET" ? ListStreams(request) : MethodNotAllowed("GET");
  const std::string& stream = s[2];
  if (absl::Status valid = ValidateStreamName(stream); !valid.ok()) return ErrorResponse(valid);
  if (s.size() == 3) {
    if (method == "GET") return Bounds(stream);
    if (method == "PUT") return Declare(stream, request);
    return MethodNotAllowed("GET, PUT");
  }
  if (s.size() == 4 && s[3] == "events") {
    if (method == "POST") return Publish(stream, request);
    if (method == "GET") return Replay(stream, request);
    return MethodNotAllowed("GET, POST");
  }
  if (s.size() == 4 && s[3] == "sse") return MethodNotAllowed("GET");  // GET is streamed.
  if (s[3] == "groups") return RouteGroups(bus_, stream, request);
  if (s[3] == "dead-letters") return RouteDeadLetters(bus_, stream, request);
  return ErrorResponse(404, "not_found", absl::StrCat("no route for ", request.path));
}

HttpResponse Api::Replay(const std::string& stream, const HttpRequest& request) {
  Replayer* replayer = bus_.replayer();
  if (replayer == nullptr) {
    return ErrorResponse(absl::UnimplementedError("this driver keeps no history"));
  }
  ReplayRequest replay;
  replay.stream = stream;
  replay.filter = FilterOf(request);
  absl::StatusOr<Position> after = StartPosition(request, "earliest");
  if (!after.ok()) return Error(after.status(), stream);
  replay.after = *after;
  if (request.HasQuery("until")) {
    absl::StatusOr<Cursor> until = Cursor::Decode(request.Query("until"));
    if (!until.ok()) return Error(until.status(), stream);
    replay.until = *until;
  }
  absl::StatusOr<size_t> limit = ParseLimit(request, kDefaultPageLimit, kMaxReplayLimit);
  if (!limit.ok()) return Error(limit.status(), stream);
  replay.limit = *limit;
  absl::StatusOr<ReplayPage> page = replayer->Replay(replay);
  if (!page.ok()) return Error(page.status(), stream);
  return JsonResponse(200, PageJson(*page, stream, replayer->epoch()));
}

absl::StatusOr<Position> Api::StartPosition(const HttpRequest& request,
                                            absl::string_view fallback) const {
  if (!request.HasQuery("after_time")) {
    return Position::Parse(request.HasQuery("after") ? request.Query("after") : fallback);
  }
  if (request.HasQuery("after")) {
    return InvalidArgument("give either after or after_time, not both");
  }
  KEEL_ASSIGN_OR_RETURN(absl::Time time, ParseRfc3339(request.Query("after_time"), "after_time"));
  if (bus_.replayer() == nullptr) return absl::UnimplementedError("this driver keeps no history");
  return PositionAtTime(*bus_.replayer(), request.segments[2], time);
}

HttpResponse Api::Bounds(const std::string& stream) {
  if (bus_.replayer() == nullptr) {
    return ErrorResponse(absl::UnimplementedError("this driver keeps no history"));
  }
  absl::StatusOr<StreamInfo> info = bus_.replayer()->Bounds(stream);
  if (!info.ok()) return Error(info.status(), stream);
  absl::StatusOr<StreamPolicy> policy = bus_.PolicyOf(stream);
  if (!policy.ok()) return Error(policy.status(), stream);
  std::string body = StreamInfoJson(*info);
  body.pop_back();  // Extend the object with the policy in force.
  absl::StrAppend(&body, ",\"policy\":", PolicyJson(*policy), "}");
  return JsonResponse(200, std::move(body));
}

HttpResponse Api::Declare(const std::string& stream, const HttpRequest& request) {
  if (!absl::StartsWithIgnoreCase(request.Header("content-type"), kJsonContentType)) {
    return ErrorResponse(415, "unsupported_media_type", "declarations must be application/json");
  }
  absl::StatusOr<StreamPolicy> policy = ParsePolicyJson(request.body);
  if (!policy.ok()) return Error(policy.status(), stream);
  if (absl::Status declared = bus_.Declare(stream, *policy); !declared.ok()) {
    return Error(declared, stream);
  }
  return JsonResponse(200, absl::StrCat("{\"stream\":", JsonString(stream),
                                        ",\"policy\":", PolicyJson(*policy), "}"));
}

HttpResponse Api::ListStreams(const HttpRequest& request) {
  if (bus_.replayer() == nullptr) {
    return ErrorResponse(absl::UnimplementedError("this driver keeps no history"));
  }
  absl::StatusOr<size_t> limit = ParseLimit(request, kDefaultListLimit, 100'000);
  if (!limit.ok()) return ErrorResponse(limit.status());
  absl::StatusOr<std::vector<StreamInfo>> infos =
      bus_.replayer()->ListStreams(request.Query("prefix"), *limit);
  if (!infos.ok()) return ErrorResponse(infos.status());
  return JsonResponse(200, StreamListJson(*infos));
}

HttpResponse Api::Ready() const {
  if (draining_.load()) return ErrorResponse(503, "unavailable", "the daemon is shutting down");
  const std::string degraded = bus_.DegradedReason();
  if (!degraded.empty()) {
    return JsonResponse(200, absl::StrCat("{\"status\":\"degraded\",\"reason\":", JsonString(degraded),
                                  "}"));
  }
  return JsonResponse(200, "{\"status\":\"ready\"}");
}

HttpResponse Api::Error(const absl::Status& status, const std::string& stream) const {
  return ErrorResponseWithDetails(status, stream, EpochOf(bus_));
}

bool Api::IsSse(const HttpRequest& request) {
  const auto& s = request.segments;
  return request.method == "GET" && s.size() == 4 && s[0] == "v1" && s[1] == "streams" &&
         s[3] == "sse";
}

absl::StatusOr<Api::SseStart> Api::SubscribeSse(const HttpRequest& request) {
  try {
    SseStart start;
    KEEL_ASSIGN_OR_RETURN(start.options, SseSubscribeOptions(request));
    KEEL_ASSIGN_OR_RETURN(start.subscription, bus_.Subscribe(start.options));
    return start;
  } catch (const std::exception& e) {  // From the driver: see the class comment.
    return ExceptionStatus(e);
  }
}

absl::StatusOr<SubscribeOptions> Api::SseSubscribeOptions(const HttpRequest& request) const {
  SubscribeOptions options;
  options.stream = request.segments[2];
  KEEL_RETURN_IF_ERROR(ValidateStreamName(options.stream));
  const absl::string_view last_event_id = request.Header("last-event-id");
  if (!last_event_id.empty()) {
    KEEL_ASSIGN_OR_RETURN(options.after, Position::Parse(last_event_id));
  } else {
    KEEL_ASSIGN_OR_RETURN(options.after, StartPosition(request, "latest"));
  }
  options.filter = FilterOf(request);
  options.overflow = OverflowPolicy::kCatchUp;
  options.queue_capacity = 256;
  return options;
}

}  // namespace keel::server
