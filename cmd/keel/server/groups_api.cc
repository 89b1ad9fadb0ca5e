#include "cmd/keel/server/groups_api.h"

#include "absl/strings/str_cat.h"
#include "cmd/keel/server/api_helpers.h"
#include "cmd/keel/server/group_json.h"
#include "cmd/keel/server/http_errors.h"
#include "core/errors.h"

namespace keel::server {
namespace {

// "billing:consume" -> {"billing", "consume"}; no known action -> {segment, ""}.
std::pair<std::string, std::string> SplitAction(const std::string& segment) {
  const size_t colon = segment.rfind(':');
  if (colon != std::string::npos) {
    const std::string action = segment.substr(colon + 1);
    if (action == "consume" || action == "commit" || action == "seek") {
      return {segment.substr(0, colon), action};
    }
  }
  return {segment, ""};
}

HttpResponse Describe(ConsumerGroups& groups, EventBus& bus, const std::string& stream,
                      const std::string& group) {
  absl::StatusOr<GroupInfo> info = groups.Describe(stream, group);
  if (!info.ok()) return ErrorResponseWithDetails(info.status(), stream, EpochOf(bus));
  return JsonResponse(200, GroupInfoJson(*info));
}

HttpResponse Consume(ConsumerGroups& groups, EventBus& bus, const std::string& stream,
                     const std::string& group, const HttpRequest& request) {
  absl::StatusOr<ConsumeRequest> consume = ParseConsumeBody(request.body);
  if (!consume.ok()) return ErrorResponse(consume.status());
  consume->stream = stream;
  consume->group = group;
  absl::StatusOr<ConsumePage> page = groups.Consume(*consume);
  if (!page.ok()) return ErrorResponseWithDetails(page.status(), stream, EpochOf(bus));
  return JsonResponse(200, ConsumePageJson(*page, stream, EpochOf(bus)));
}

HttpResponse Commit(ConsumerGroups& groups, EventBus& bus, const std::string& stream,
                    const std::string& group, const HttpRequest& request) {
  absl::StatusOr<CommitBody> commit = ParseCommitBody(request.body);
  if (!commit.ok()) return ErrorResponse(commit.status());
  absl::Status status = groups.Commit(stream, group, commit->cursor, commit->token);
  if (!status.ok()) return ErrorResponseWithDetails(status, stream, EpochOf(bus));
  return Describe(groups, bus, stream, group);
}

HttpResponse Seek(ConsumerGroups& groups, EventBus& bus, const std::string& stream,
                  const std::string& group, const HttpRequest& request) {
  absl::StatusOr<SeekBody> seek = ParseSeekBody(request.body);
  if (!seek.ok()) return ErrorResponse(seek.status());
  absl::Status status = seek->to ? groups.Seek(stream, group, *seek->to)
                                 : groups.SeekToTime(stream, group, *seek->time);
  if (!status.ok()) return ErrorResponseWithDetails(status, stream, EpochOf(bus));
  return Describe(groups, bus, stream, group);
}

}  // namespace

HttpResponse RouteGroups(EventBus& bus, const std::string& stream, const HttpRequest& request) {
  ConsumerGroups* groups = bus.groups();
  if (groups == nullptr) {
    return ErrorResponse(absl::UnimplementedError("this driver keeps no consumer groups"));
  }
  const auto& s = request.segments;
  if (s.size() == 4) {
    if (request.method != "GET") return MethodNotAllowed("GET");
    absl::StatusOr<std::vector<GroupInfo>> infos = groups->List(stream);
    if (!infos.ok()) return ErrorResponse(infos.status());
    return JsonResponse(200, GroupListJson(*infos));
  }
  if (s.size() != 5) {
    return ErrorResponse(404, "not_found", absl::StrCat("no route for ", request.path));
  }
  const auto [group, action] = SplitAction(s[4]);
  if (action.empty()) {
    if (request.method != "GET") return MethodNotAllowed("GET");
    return Describe(*groups, bus, stream, group);
  }
  if (request.method != "POST") return MethodNotAllowed("POST");
  if (action == "consume") return Consume(*groups, bus, stream, group, request);
  if (action == "commit") return Commit(*groups, bus, stream, group, request);
  return Seek(*groups, bus, stream, group, request);
}

std::string GroupLagMetrics(EventBus& bus) {
  std::string out =
      "# HELP keel_group_lag Events after a consumer group's committed cursor.\n"
      "# TYPE keel_group_lag gauge\n";
  if (bus.groups() == nullptr) return out;
  absl::StatusOr<std::vector<GroupInfo>> infos = bus.groups()->List("");
  if (!infos.ok()) return out;
  // Stream and group names are [A-Za-z0-9._:-]: nothing to escape in labels.
  for (const GroupInfo& info : *infos) {
    absl::StrAppend(&out, "keel_group_lag{stream=\"", info.stream, "\",group=\"", info.group,
                    "\"} ", info.lag, "\n");
  }
  return out;
}

}  // namespace keel::server
