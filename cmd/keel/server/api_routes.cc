// The route table of HTTP API v1: rfcs/0004-http-api.md §3, one line a
// route. What each route needs of a token (Scope, grant.h) is what
// RequestGate checks on the route's {stream}.
#include "keel/cmd/keel/server/api.h"

namespace keel::server {

const RouteTable& Api::Table() {
  static const RouteTable* const table = new RouteTable({
      // The publish first: it is most of the traffic, and matching stops at
      // the first pattern that fits.
      {"POST", "/v1/streams/{stream}/events", Scope::kPublish, "publish", &Api::Publish},
      {"GET", "/v1/streams/{stream}/events", Scope::kRead, "replay", &Api::Replay},
      {"GET", "/v1/streams/{stream}/sse", Scope::kRead, "sse", kStreamedRoute},
      {"GET", "/v1/streams/{stream}/cursor", Scope::kRead, "cursor at sequence", &Api::CursorAt},
      {"GET", "/v1/streams/{stream}", Scope::kRead, "bounds", &Api::Bounds},
      {"PUT", "/v1/streams/{stream}", Scope::kAdmin, "declare", &Api::Declare},
      {"DELETE", "/v1/streams/{stream}", Scope::kAdmin, "delete stream", &Api::DeleteStream},
      {"GET", "/v1/streams", Scope::kRead, "list streams", &Api::ListStreams},
      // A collection's writes are publishes to its stream: {stream} names
      // both, so tokens grant them like the stream.
      {"PUT", "/v1/collections/{stream}/docs/{id}", Scope::kPublish, "put document",
       &Api::PutDocument},
      {"GET", "/v1/collections/{stream}/docs/{id}/history", Scope::kRead, "document history",
       &Api::DocumentHistory},
      {"GET", "/v1/collections/{stream}/docs/{id}", Scope::kRead, "get document",
       &Api::GetDocument},
      {"DELETE", "/v1/collections/{stream}/docs/{id}", Scope::kPublish, "delete document",
       &Api::DeleteDocument},
      // Group names may contain ':': an action is what follows the last
      // one, so the actions' patterns come before the bare group's (and a
      // group whose name ends in ":consume", ":commit" or ":seek" cannot
      // be described over HTTP).
      {"POST", "/v1/streams/{stream}/groups/{group}:consume", Scope::kConsume, "consume",
       &Api::ConsumeGroup},
      {"POST", "/v1/streams/{stream}/groups/{group}:commit", Scope::kConsume, "commit",
       &Api::CommitGroup},
      {"POST", "/v1/streams/{stream}/groups/{group}:seek", Scope::kAdmin, "seek", &Api::SeekGroup},
      {"GET", "/v1/streams/{stream}/groups/{group}", Scope::kRead, "describe group",
       &Api::DescribeGroup},
      {"GET", "/v1/streams/{stream}/groups", Scope::kRead, "list groups", &Api::ListGroups},
      {"POST", "/v1/streams/{stream}/dead-letters/{sequence}:republish", Scope::kAdmin, "republish",
       &Api::RepublishDeadLetter},
      // Dead letters hold failed events of every tenant, with their
      // payloads: admin's, like republishing them.
      {"GET", "/v1/streams/{stream}/dead-letters/{sequence}", Scope::kAdmin, "dead letter",
       &Api::ShowDeadLetter},
      {"GET", "/v1/streams/{stream}/dead-letters", Scope::kAdmin, "dead letters",
       &Api::ListDeadLetters},
      // Push subscriptions name endpoints and hold signing secrets: admin's.
      // As for groups, an action follows the last ':' of the name.
      {"POST", "/v1/subscriptions/{name}:pause", Scope::kAdmin, "pause subscription",
       &Api::PauseSubscription},
      {"POST", "/v1/subscriptions/{name}:resume", Scope::kAdmin, "resume subscription",
       &Api::ResumeSubscription},
      {"POST", "/v1/subscriptions/{name}:secrets", Scope::kAdmin, "rotate subscription secrets",
       &Api::RotateSubscriptionSecrets},
      {"POST", "/v1/subscriptions/{name}:redrive", Scope::kAdmin, "redrive subscription",
       &Api::RedriveSubscription},
      {"GET", "/v1/subscriptions/{name}", Scope::kAdmin, "describe subscription",
       &Api::DescribeSubscription},
      {"DELETE", "/v1/subscriptions/{name}", Scope::kAdmin, "delete subscription",
       &Api::DeleteSubscription},
      {"POST", "/v1/subscriptions", Scope::kAdmin, "create subscription", &Api::CreateSubscription},
      {"GET", "/v1/subscriptions", Scope::kAdmin, "list subscriptions", &Api::ListSubscriptions},
      {"GET", "/healthz", Scope::kNone, "health", &Api::Health},
      {"GET", "/readyz", Scope::kNone, "readiness", &Api::Ready},
      {"GET", "/metrics", Scope::kReadAll, "metrics", &Api::MetricsText},
  });
  return *table;
}

RouteMatch Api::Resolve(const HttpRequest& request) { return Table().Match(request); }

absl::Span<const Route> Api::Routes() { return Table().routes(); }

bool Api::IsPublish(const RouteMatch& route) {
  return route.route != nullptr && route.route->handler == &Api::Publish;
}

}  // namespace keel::server
