// The consumer-group side of /metrics. The group and dead-letter routes
// themselves are Api's (groups_api.cc, dead_letters_api.cc), in the route
// table with the others (api_routes.cc).
//
// Thread safety: a pure function over a thread-safe bus.
#ifndef KEEL_CMD_KEEL_SERVER_GROUPS_API_H_
#define KEEL_CMD_KEEL_SERVER_GROUPS_API_H_

#include <string>

#include "keel/core/event_bus.h"

namespace keel::server {

// `keel_group_lag{stream,group}` for /metrics, read at scrape time.
std::string GroupLagMetrics(EventBus& bus);

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_GROUPS_API_H_
