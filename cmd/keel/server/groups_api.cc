// The consumer-group routes of Api (rfcs/0005-consumer-groups.md), and the
// group lag of /metrics.
#include "keel/cmd/keel/server/groups_api.h"

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/api.h"
#include "keel/cmd/keel/server/api_helpers.h"
#include "keel/cmd/keel/server/group_json.h"
#include "keel/cmd/keel/server/http_errors.h"
#include "keel/core/errors.h"

namespace keel::server {
namespace {

HttpResponse NoGroupsResponse() {
  return ErrorResponse(absl::UnimplementedError("this driver keeps no consumer groups"));
}

}  // namespace

HttpResponse Api::ListGroups(const HttpRequest&, const RouteParams& params) {
  ConsumerGroups* groups = bus_.groups();
  if (groups == nullptr) return NoGroupsResponse();
  absl::StatusOr<std::vector<GroupInfo>> infos = groups->List(params.Get("stream"));
  if (!infos.ok()) return ErrorResponse(infos.status());
  return JsonResponse(200, GroupListJson(*infos));
}

HttpResponse Api::DescribeGroup(const HttpRequest&, const RouteParams& params) {
  ConsumerGroups* groups = bus_.groups();
  if (groups == nullptr) return NoGroupsResponse();
  const absl::string_view stream = params.Get("stream");
  absl::StatusOr<GroupInfo> info = groups->Describe(stream, params.Get("group"));
  if (!info.ok()) return Error(info.status(), stream);
  return JsonResponse(200, GroupInfoJson(*info));
}

HttpResponse Api::ConsumeGroup(const HttpRequest& request, const RouteParams& params) {
  ConsumerGroups* groups = bus_.groups();
  if (groups == nullptr) return NoGroupsResponse();
  const absl::string_view stream = params.Get("stream");
  absl::StatusOr<ConsumeRequest> consume = ParseConsumeBody(request.body);
  if (!consume.ok()) return ErrorResponse(consume.status());
  consume->stream = std::string(stream);
  consume->group = std::string(params.Get("group"));
  absl::StatusOr<ConsumePage> page = groups->Consume(*consume);
  if (!page.ok()) return Error(page.status(), stream);
  return JsonResponse(200, ConsumePageJson(*page, stream, EpochOf(bus_)));
}

HttpResponse Api::CommitGroup(const HttpRequest& request, const RouteParams& params) {
  ConsumerGroups* groups = bus_.groups();
  if (groups == nullptr) return NoGroupsResponse();
  absl::StatusOr<CommitBody> commit = ParseCommitBody(request.body);
  if (!commit.ok()) return ErrorResponse(commit.status());
  const absl::string_view stream = params.Get("stream");
  absl::Status status = groups->Commit(stream, params.Get("group"), commit->cursor, commit->token);
  if (!status.ok()) return Error(status, stream);
  return DescribeGroup(request, params);
}

HttpResponse Api::SeekGroup(const HttpRequest& request, const RouteParams& params) {
  ConsumerGroups* groups = bus_.groups();
  if (groups == nullptr) return NoGroupsResponse();
  absl::StatusOr<SeekBody> seek = ParseSeekBody(request.body);
  if (!seek.ok()) return ErrorResponse(seek.status());
  const absl::string_view stream = params.Get("stream");
  const absl::string_view group = params.Get("group");
  absl::Status status = seek->to ? groups->Seek(stream, group, *seek->to)
                                 : groups->SeekToTime(stream, group, *seek->time);
  if (!status.ok()) return Error(status, stream);
  return DescribeGroup(request, params);
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
