#include "keel/cmd/keel/server/api.h"

#include <algorithm>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/api_helpers.h"
#include "keel/cmd/keel/server/grant_filters.h"
#include "keel/cmd/keel/server/groups_api.h"
#include "keel/cmd/keel/server/http_errors.h"
#include "keel/cmd/keel/server/json_codec.h"
#include "keel/cmd/keel/server/json_fields.h"
#include "keel/cmd/keel/server/policy_json.h"
#include "keel/cmd/keel/server/publish_body.h"
#include "keel/core/errors.h"
#include "keel/core/publish_validation.h"
#include "keel/core/status_macros.h"
#include "keel/core/topic.h"

namespace keel::server {
namespace {

constexpr size_t kDefaultPageLimit = 100;
constexpr size_t kDefaultListLimit = 1000;

}  // namespace

HttpResponse Api::Handle(const HttpRequest& request, const RouteMatch& route) {
  metrics_.CountRequest();
  return Guarded([&] { return Serve(request, route); });
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

HttpResponse Api::Serve(const HttpRequest& request, const RouteMatch& route) {
  const auto& s = request.segments;
  if (request.method == "OPTIONS" && !s.empty() && s[0] == "v1") {
    // CORS preflight (e.g. a browser POSTing application/json), whatever
    // the path. The session adds Access-Control-Allow-Origin
    // (--cors-origin) to every response.
    HttpResponse response;
    response.status = 204;
    response.headers = {{"Access-Control-Allow-Methods", "GET, POST, PUT, DELETE, OPTIONS"},
                        {"Access-Control-Allow-Headers",
                         "Authorization, Content-Type, Idempotency-Key, Last-Event-ID, "
                         "Keel-Expected-Last-Sequence"},
                        {"Access-Control-Max-Age", "600"}};
    return response;
  }
  // A path under /v1/streams/{stream} names a stream, checked before the
  // rest of the path: a bad name is a 400 even where no route follows.
  if (s.size() >= 3 && s[0] == "v1" && s[1] == "streams") {
    if (absl::Status valid = ValidateStreamName(s[2]); !valid.ok()) return ErrorResponse(valid);
  }
  if (route.route == nullptr) {
    if (route.path_found()) return MethodNotAllowed(route.allow);
    return ErrorResponse(404, "not_found", absl::StrCat("no route for ", request.path));
  }
  // A streamed route (SSE) is the session's to serve, never Handle's.
  if (route.route->streamed()) return MethodNotAllowed(route.allow);
  return (this->*route.route->handler)(request, route.params);
}

HttpResponse Api::Health(const HttpRequest&, const RouteParams&) {
  return JsonResponse(200, "{\"status\":\"ok\"}");
}

HttpResponse Api::MetricsText(const HttpRequest&, const RouteParams&) {
  std::string text =
      metrics_.Render() + ColdTierMetrics(bus_) + GroupLagMetrics(bus_) + PushMetrics();
  for (const std::function<std::string()>& more : metrics_texts_) text += more();
  HttpResponse response = JsonResponse(200, std::move(text));
  response.content_type = "text/plain; version=0.0.4";
  return response;
}

HttpResponse Api::Replay(const HttpRequest& request, const RouteParams& params) {
  const absl::string_view stream = params.Get("stream");
  Replayer* replayer = bus_.replayer();
  if (replayer == nullptr) return NoHistoryResponse();
  ReplayRequest replay;
  replay.stream = std::string(stream);
  absl::StatusOr<EventFilter> filter = ReadFilter(request);
  if (!filter.ok()) return Error(filter.status(), stream);
  replay.filter = *std::move(filter);
  absl::StatusOr<Position> after = StartPosition(request, stream, "earliest");
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

absl::StatusOr<Position> Api::StartPosition(const HttpRequest& request, absl::string_view stream,
                                            absl::string_view fallback) const {
  const int given = request.HasQuery("after") + request.HasQuery("after_time") +
                    request.HasQuery("after_sequence");
  if (given > 1) return InvalidArgument("give one of after, after_time and after_sequence");
  if (request.HasQuery("after_time")) {
    KEEL_ASSIGN_OR_RETURN(absl::Time time,
                          ParseRfc3339(request.Query("after_time"), "after_time"));
    if (bus_.replayer() == nullptr) return absl::UnimplementedError("this driver keeps no history");
    return PositionAtTime(*bus_.replayer(), stream, time);
  }
  if (request.HasQuery("after_sequence")) {
    KEEL_ASSIGN_OR_RETURN(Cursor cursor, CursorOfQuery(request, "after_sequence", stream));
    return Position::After(cursor);
  }
  return Position::Parse(request.HasQuery("after") ? request.Query("after") : fallback);
}

absl::StatusOr<Cursor> Api::CursorOfQuery(const HttpRequest& request, absl::string_view parameter,
                                          absl::string_view stream) const {
  uint64_t sequence = 0;
  if (!absl::SimpleAtoi(request.Query(parameter), &sequence)) {
    return InvalidArgument(absl::StrCat(parameter, " must be a sequence number (0 or more)"));
  }
  if (bus_.replayer() == nullptr) return absl::UnimplementedError("this driver keeps no history");
  return CursorAtSequence(*bus_.replayer(), stream, sequence);
}

HttpResponse Api::CursorAt(const HttpRequest& request, const RouteParams& params) {
  const absl::string_view stream = params.Get("stream");
  if (!request.HasQuery("sequence")) {
    return Error(InvalidArgument("give ?sequence=N"), stream);
  }
  absl::StatusOr<Cursor> cursor = CursorOfQuery(request, "sequence", stream);
  if (!cursor.ok()) return Error(cursor.status(), stream);
  return JsonResponse(200, absl::StrCat("{\"stream\":", JsonString(stream),
                                        ",\"sequence\":", cursor->sequence, ",\"cursor\":\"",
                                        cursor->Encode(), "\"}"));
}

HttpResponse Api::Bounds(const HttpRequest&, const RouteParams& params) {
  const absl::string_view stream = params.Get("stream");
  if (bus_.replayer() == nullptr) return NoHistoryResponse();
  absl::StatusOr<StreamInfo> info = bus_.replayer()->Bounds(stream);
  if (!info.ok()) return Error(info.status(), stream);
  absl::StatusOr<StreamPolicy> policy = bus_.PolicyOf(stream);
  if (!policy.ok()) return Error(policy.status(), stream);
  std::optional<StreamTiers> tiers;
  if (bus_.tiers() != nullptr) {
    absl::StatusOr<StreamTiers> found = bus_.tiers()->TiersOf(stream);
    if (!found.ok()) return Error(found.status(), stream);
    tiers = *found;
  }
  std::string body = StreamInfoJson(*info, tiers ? &*tiers : nullptr);
  body.pop_back();  // Extend the object with the policy in force.
  absl::StrAppend(&body, ",\"policy\":", PolicyJson(*policy), "}");
  return JsonResponse(200, std::move(body));
}

HttpResponse Api::Declare(const HttpRequest& request, const RouteParams& params) {
  const absl::string_view stream = params.Get("stream");
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

HttpResponse Api::DeleteStream(const HttpRequest&, const RouteParams& params) {
  const absl::string_view stream = params.Get("stream");
  absl::StatusOr<DeletionReport> deleted = bus_.DeleteStream(stream);
  if (!deleted.ok()) return Error(deleted.status(), stream);
  std::string streams;
  for (const std::string& name : deleted->streams) {
    absl::StrAppend(&streams, streams.empty() ? "" : ",", JsonString(name));
  }
  return JsonResponse(
      200, absl::StrCat("{\"stream\":", JsonString(stream), ",\"deleted\":[", streams,
                        "],\"events\":", deleted->events, ",\"groups\":", deleted->groups, "}"));
}

HttpResponse Api::ListStreams(const HttpRequest& request, const RouteParams&) {
  if (bus_.replayer() == nullptr) return NoHistoryResponse();
  absl::StatusOr<size_t> limit = ParseLimit(request, kDefaultListLimit, 100'000);
  if (!limit.ok()) return ErrorResponse(limit.status());
  // A token scoped to prefixes lists under each of them; together, in name
  // order, the first `limit` of the streams it may read.
  std::vector<StreamInfo> all;
  for (const std::string& prefix : ListPrefixes(request, request.Query("prefix"))) {
    absl::StatusOr<std::vector<StreamInfo>> infos = bus_.replayer()->ListStreams(prefix, *limit);
    if (!infos.ok()) return ErrorResponse(infos.status());
    for (StreamInfo& info : *infos) all.push_back(std::move(info));
  }
  std::sort(all.begin(), all.end(),
            [](const StreamInfo& a, const StreamInfo& b) { return a.stream < b.stream; });
  all.erase(
      std::unique(all.begin(), all.end(),
                  [](const StreamInfo& a, const StreamInfo& b) { return a.stream == b.stream; }),
      all.end());
  if (all.size() > *limit) all.resize(*limit);
  std::vector<StreamTiers> tiers;
  if (bus_.tiers() != nullptr) {
    for (const StreamInfo& info : all) {
      absl::StatusOr<StreamTiers> found = bus_.tiers()->TiersOf(info.stream);
      if (!found.ok()) return ErrorResponse(found.status());
      tiers.push_back(*found);
    }
  }
  return JsonResponse(200, StreamListJson(all, tiers));
}

HttpResponse Api::Ready(const HttpRequest&, const RouteParams&) {
  if (draining_.load()) return ErrorResponse(503, "unavailable", "the daemon is shutting down");
  const std::string degraded = bus_.DegradedReason();
  if (!degraded.empty()) {
    return JsonResponse(
        200, absl::StrCat("{\"status\":\"degraded\",\"reason\":", JsonString(degraded), "}"));
  }
  return JsonResponse(200, "{\"status\":\"ready\"}");
}

HttpResponse Api::Error(const absl::Status& status, absl::string_view stream) const {
  return ErrorResponseWithDetails(status, stream, EpochOf(bus_));
}

absl::StatusOr<Api::SseStart> Api::SubscribeSse(const HttpRequest& request,
                                                const RouteParams& params) {
  try {
    SseStart start;
    KEEL_ASSIGN_OR_RETURN(start.options, SseSubscribeOptions(request, params.Get("stream")));
    KEEL_ASSIGN_OR_RETURN(start.subscription, bus_.Subscribe(start.options));
    return start;
  } catch (const std::exception& e) {  // From the driver: see the class comment.
    return ExceptionStatus(e);
  }
}

absl::StatusOr<SubscribeOptions> Api::SseSubscribeOptions(const HttpRequest& request,
                                                          absl::string_view stream) const {
  SubscribeOptions options;
  options.stream = std::string(stream);
  KEEL_RETURN_IF_ERROR(ValidateStreamName(options.stream));
  const absl::string_view last_event_id = request.Header("last-event-id");
  if (!last_event_id.empty()) {
    KEEL_ASSIGN_OR_RETURN(options.after, Position::Parse(last_event_id));
  } else {
    KEEL_ASSIGN_OR_RETURN(options.after, StartPosition(request, stream, "latest"));
  }
  KEEL_ASSIGN_OR_RETURN(options.filter, ReadFilter(request));
  options.overflow = OverflowPolicy::kCatchUp;
  options.queue_capacity = 256;
  return options;
}

}  // namespace keel::server
