// RouteTable: the HTTP API's routes as data — each a method, a path pattern
// with named segments, the access it needs and its handler — and the
// matching of a request against them (rfcs/0004-http-api.md §3).
//
// A pattern is '/'-separated segments, each a literal (`streams`), a named
// segment (`{stream}`: any one segment, empty too) or a named segment with a
// literal suffix (`{group}:consume`: a segment ending so, named without the
// suffix). Requests are matched on their percent-decoded segments
// (HttpRequest::segments), so `%2F` in a name stays inside its segment.
//
// The first pattern in table order that matches a path decides it, so a
// pattern goes before any broader one that matches its paths too
// (`{group}:consume` before `{group}`); the routes of that pattern are the
// path's methods. A matched path without the request's method is 405 (its
// Allow lists the path's methods); a path no pattern matches is 404.
//
// Matching compares the request's segments with the patterns' in place: no
// regex and no allocation. The table is small, and its first route is the
// hottest (a publish).
//
// Thread safety: immutable once built; Match may be called concurrently.
#ifndef KEEL_CMD_KEEL_SERVER_ROUTE_TABLE_H_
#define KEEL_CMD_KEEL_SERVER_ROUTE_TABLE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "keel/cmd/keel/server/grant.h"
#include "keel/cmd/keel/server/http_types.h"

namespace keel::server {

class Api;

// The named segments of a matched path, read from the request's segments
// (valid while the request is, unchanged).
class RouteParams {
 public:
  // The segment named `name` in the route's pattern; "" when it names none.
  absl::string_view Get(absl::string_view name) const;

 private:
  friend class RouteTable;

  struct Named {
    std::string name;
    size_t segment;  // Its index in the path.
    size_t suffix;   // The length of the literal after it (":consume").
  };

  const std::vector<Named>* named_ = nullptr;  // The matched pattern's.
  const std::string* segments_ = nullptr;      // The request's.
};

// Every route's handler: a method of Api given the request and its route's
// named segments.
using RouteHandler = HttpResponse (Api::*)(const HttpRequest& request, const RouteParams& params);
// The handler of a route the session streams (SSE) instead of answering
// through Api::Handle.
inline constexpr RouteHandler kStreamedRoute = nullptr;

// One line of a table. Its texts are views (string literals in a table):
// they must outlive the table.
struct Route {
  absl::string_view method;   // "GET", "POST", "PUT".
  absl::string_view pattern;  // "/v1/streams/{stream}/events".
  Scope scope;                // What a token must allow (RequestGate).
  absl::string_view name;     // What the route does, for people: "publish".
  RouteHandler handler;

  bool streamed() const { return handler == kStreamedRoute; }
};

// What a request matched: a route, or a known path without the request's
// method (405), or nothing (404). It refers to the table and to the
// request's segments: it lives as long as both.
struct RouteMatch {
  const Route* route = nullptr;  // Set when a route serves the request.
  // The matched path's methods as an Allow header ("GET, POST"); "" for a
  // path no pattern matches.
  absl::string_view allow;
  // The matched path's routes all need Scope::kNone (health probes).
  bool open_path = false;
  RouteParams params;

  bool path_found() const { return !allow.empty(); }
};

class RouteTable {
 public:
  // Aborts on a malformed pattern: the table is the program's own.
  explicit RouteTable(std::vector<Route> routes);
  // Matches point into the table.
  RouteTable(const RouteTable&) = delete;
  RouteTable& operator=(const RouteTable&) = delete;

  RouteMatch Match(absl::string_view method, absl::Span<const std::string> segments) const;
  RouteMatch Match(const HttpRequest& request) const {
    return Match(request.method, request.segments);
  }

  absl::Span<const Route> routes() const { return routes_; }

 private:
  struct Segment {
    bool named = false;
    std::string literal;  // The whole segment, or the suffix of a named one.
  };
  // One pattern and the routes (its methods) that share it.
  struct Path {
    std::vector<Segment> segments;
    std::vector<RouteParams::Named> named;
    std::vector<const Route*> routes;  // In table order.
    std::string allow;                 // Their methods, sorted, ", "-joined.
    bool open = true;
  };

  static bool Matches(const Path& path, absl::Span<const std::string> segments);

  std::vector<Route> routes_;
  std::vector<Path> paths_;  // In table order of their first route.
};

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_ROUTE_TABLE_H_
