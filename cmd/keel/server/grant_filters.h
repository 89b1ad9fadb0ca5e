// What a request's grant (HttpRequest::grant) narrows in the handlers, so
// that a tenant-bound token reads and writes only its tenant's events and a
// prefix-scoped one lists only its streams (rfcs/0004-http-api.md §13). A
// request without a grant (a daemon without credentials) is narrowed by
// nothing.
//
// Thread safety: pure functions.
#ifndef KEEL_CMD_KEEL_SERVER_GRANT_FILTERS_H_
#define KEEL_CMD_KEEL_SERVER_GRANT_FILTERS_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/cmd/keel/server/http_types.h"
#include "keel/core/consumer_groups.h"
#include "keel/core/event.h"
#include "keel/core/replayer.h"

namespace keel::server {

// A kPermissionDenied status whose error answer names the missing scope
// (`"scope":"<scope>"`), as the gate's 403 does.
absl::Status ScopeDenied(absl::string_view scope, absl::string_view message);
// The `"scope":…` details of a ScopeDenied status; "" for any other.
std::string ScopeDeniedDetails(const absl::Status& status);

// The filter of a read (replay, SSE): ?tenant= and ?type=, the tenant
// forced to the grant's. A ?tenant= of another tenant is ScopeDenied.
absl::StatusOr<EventFilter> ReadFilter(const HttpRequest& request);

// Gives `events` the grant's tenant where they have none; ScopeDenied for
// an event of another tenant.
absl::Status StampTenant(const HttpRequest& request, std::vector<Event>& events);

// The grant's tenant, "" for none: the events a consumer-group page may show.
absl::string_view BoundTenant(const HttpRequest& request);

// Removes from `events` those of other tenants than `tenant` (none when "").
void KeepTenant(absl::string_view tenant, std::vector<Event>& events);

// Removes from `groups` those the grant does not own (Grant::OwnsGroup).
void KeepOwnedGroups(const HttpRequest& request, std::vector<GroupInfo>& groups);

// The stream-name prefixes to list for a request listing with ?prefix=
// `prefix`: {prefix} without a grant or for one that reads every stream,
// else each read prefix that overlaps it, narrowed to the longer of the two
// (none when the grant reads none of them).
std::vector<std::string> ListPrefixes(const HttpRequest& request, absl::string_view prefix);

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_GRANT_FILTERS_H_
