// The consumer-group and dead-letter routes of HTTP API v1
// (rfcs/0005-consumer-groups.md), hooked into Api::Route:
//
//   GET  /v1/streams/{s}/groups                      list
//   GET  /v1/streams/{s}/groups/{g}                  cursor, lag, lease
//   POST /v1/streams/{s}/groups/{g}:consume|:commit|:seek
//   GET  /v1/streams/{s}/dead-letters?after=&limit=  list
//   GET  /v1/streams/{s}/dead-letters/{sequence}     one
//   POST /v1/streams/{s}/dead-letters/{sequence}:republish
//
// Group names may contain ':', so the action is split off at the last ':'
// (a group whose name ends in ":consume", ":commit" or ":seek" cannot be
// described over HTTP). `stream` is validated by the caller.
//
// Thread safety: pure functions over a thread-safe bus.
#ifndef KEEL_CMD_KEEL_SERVER_GROUPS_API_H_
#define KEEL_CMD_KEEL_SERVER_GROUPS_API_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "cmd/keel/server/http_types.h"
#include "core/event_bus.h"

namespace keel::server {

// Requests whose segments are v1/streams/{stream}/groups[/...].
HttpResponse RouteGroups(EventBus& bus, const std::string& stream, const HttpRequest& request);
// Requests whose segments are v1/streams/{stream}/dead-letters[/...].
HttpResponse RouteDeadLetters(EventBus& bus, const std::string& stream,
                              const HttpRequest& request);

// `keel_group_lag{stream,group}` for /metrics, read at scrape time.
std::string GroupLagMetrics(EventBus& bus);

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_GROUPS_API_H_
