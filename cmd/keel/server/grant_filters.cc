#include "keel/cmd/keel/server/grant_filters.h"

#include <algorithm>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/grant.h"
#include "keel/cmd/keel/server/json_codec.h"

namespace keel::server {
namespace {

constexpr absl::string_view kScopePayload = "keel.scope";

}  // namespace

absl::Status ScopeDenied(absl::string_view scope, absl::string_view message) {
  absl::Status status = absl::PermissionDeniedError(message);
  status.SetPayload(kScopePayload, absl::Cord(scope));
  return status;
}

std::string ScopeDeniedDetails(const absl::Status& status) {
  absl::optional<absl::Cord> scope = status.GetPayload(kScopePayload);
  return scope ? absl::StrCat("\"scope\":", JsonString(std::string(*scope))) : std::string();
}

absl::StatusOr<EventFilter> ReadFilter(const HttpRequest& request) {
  EventFilter filter{std::string(request.Query("tenant")), std::string(request.Query("type"))};
  const absl::string_view tenant = BoundTenant(request);
  if (tenant.empty()) return filter;
  if (!filter.tenant.empty() && filter.tenant != tenant) {
    return ScopeDenied(
        "read", absl::StrCat("the token reads only tenant '", tenant, "'; ?tenant= names another"));
  }
  filter.tenant = std::string(tenant);
  return filter;
}

absl::Status StampTenant(const HttpRequest& request, std::vector<Event>& events) {
  const absl::string_view tenant = BoundTenant(request);
  if (tenant.empty()) return absl::OkStatus();
  for (size_t i = 0; i < events.size(); ++i) {
    Event& event = events[i];
    if (event.tenant.empty()) {
      event.tenant = std::string(tenant);
    } else if (event.tenant != tenant) {
      return ScopeDenied("publish", absl::StrCat("event ", i,
                                                 ": the token publishes only for "
                                                 "tenant '",
                                                 tenant, "', not '", event.tenant, "'"));
    }
  }
  return absl::OkStatus();
}

absl::string_view BoundTenant(const HttpRequest& request) {
  return request.grant == nullptr ? absl::string_view() : request.grant->tenant();
}

void KeepTenant(absl::string_view tenant, std::vector<Event>& events) {
  if (tenant.empty()) return;
  events.erase(std::remove_if(events.begin(), events.end(),
                              [&](const Event& event) { return event.tenant != tenant; }),
               events.end());
}

void KeepOwnedGroups(const HttpRequest& request, std::vector<GroupInfo>& groups) {
  if (request.grant == nullptr) return;
  groups.erase(std::remove_if(groups.begin(), groups.end(),
                              [&](const GroupInfo& info) {
                                return !request.grant->OwnsGroup(info.group) ||
                                       !request.grant->Covers(TokenScope::kRead, info.stream);
                              }),
               groups.end());
}

std::vector<std::string> ListPrefixes(const HttpRequest& request, absl::string_view prefix) {
  if (request.grant == nullptr || request.grant->CoversEverything(TokenScope::kRead)) {
    return {std::string(prefix)};
  }
  std::vector<std::string> prefixes;
  for (const std::string& allowed : request.grant->Prefixes(TokenScope::kRead)) {
    std::string narrowed;
    if (absl::StartsWith(prefix, allowed)) {
      narrowed = std::string(prefix);
    } else if (absl::StartsWith(allowed, prefix)) {
      narrowed = allowed;
    } else {
      continue;
    }
    if (std::find(prefixes.begin(), prefixes.end(), narrowed) == prefixes.end()) {
      prefixes.push_back(std::move(narrowed));
    }
  }
  return prefixes;
}

}  // namespace keel::server
