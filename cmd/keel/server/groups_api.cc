// The consumer-group routes of Api (rfcs/0005-consumer-groups.md), and the
// group lag of /metrics.
#include "keel/cmd/keel/server/groups_api.h"

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/api.h"
#include "keel/cmd/keel/server/api_helpers.h"
#include "keel/cmd/keel/server/grant_filters.h"
#include "keel/cmd/keel/server/group_json.h"
#include "keel/cmd/keel/server/http_errors.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::server {
namespace {

// Pages of a group whose consumer holds a tenant-bound token and that hold
// none of its tenant's events are committed and passed over, at most this
// many per request; then the (empty) page and its lease are answered.
constexpr int kMaxPagesPassedOver = 16;

HttpResponse NoGroupsResponse() {
  return ErrorResponse(absl::UnimplementedError("this driver keeps no consumer groups"));
}

// A page of the group's events of `tenant` only (every event for ""). The
// lease still spans the whole page, so committing its `to` moves the group
// past the other tenants' events as well: a tenant-bound token uses only its
// own groups (Grant::OwnsGroup), which no other tenant reads. A page left
// empty is committed here and the next one read, so the consumer is not
// handed lease after lease of nothing to do.
absl::StatusOr<ConsumePage> ConsumeForTenant(ConsumerGroups& groups, const ConsumeRequest& request,
                                             absl::string_view tenant) {
  for (int passed = 0;; ++passed) {
    KEEL_ASSIGN_OR_RETURN(ConsumePage page, groups.Consume(request));
    if (tenant.empty()) return page;
    KeepTenant(tenant, page.events);
    if (!page.events.empty() || page.lease.token == 0 || page.gap ||
        passed + 1 >= kMaxPagesPassedOver) {
      return page;
    }
    KEEL_RETURN_IF_ERROR(
        groups.Commit(request.stream, request.group, page.lease.to, page.lease.token));
  }
}

}  // namespace

HttpResponse Api::ListGroups(const HttpRequest& request, const RouteParams& params) {
  ConsumerGroups* groups = bus_.groups();
  if (groups == nullptr) return NoGroupsResponse();
  absl::StatusOr<std::vector<GroupInfo>> infos = groups->List(params.Get("stream"));
  if (!infos.ok()) return ErrorResponse(infos.status());
  KeepOwnedGroups(request, *infos);
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
  absl::StatusOr<ConsumePage> page = ConsumeForTenant(*groups, *consume, BoundTenant(request));
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
