// The route table of HTTP API v1 without sockets: every route of
// rfcs/0004-http-api.md §3 resolves to its handler and the access it needs,
// with its named segments; unknown paths are 404 and known paths with
// another method 405 with their Allow. Over sockets, errors_test.cc.
#include "keel/cmd/keel/server/route_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "keel/cmd/keel/server/api.h"

namespace keel::server {
namespace {

// A request for `path`, split as the parser splits a decoded target:
// `segments` when given (a segment may hold a decoded '/').
HttpRequest Request(std::string method, std::string path, std::vector<std::string> segments = {}) {
  HttpRequest request;
  request.method = std::move(method);
  request.path = std::move(path);
  if (segments.empty() && request.path.size() > 1) {
    segments = absl::StrSplit(absl::string_view(request.path).substr(1), '/');
  }
  request.segments = std::move(segments);
  return request;
}

TEST(ApiRoutesTest, EachDocumentedRouteResolvesToItsHandlerScopeAndSegments) {
  const struct {
    std::string method;
    std::string path;
    std::string route;  // Route::name.
    Scope scope;
    std::map<std::string, std::string> params;
  } routes[] = {
      // clang-format off
      {"POST", "/v1/streams/orders/events", "publish", Scope::kPublish, {{"stream", "orders"}}},
      {"GET", "/v1/streams/orders/events", "replay", Scope::kRead, {{"stream", "orders"}}},
      {"GET", "/v1/streams/orders", "bounds", Scope::kRead, {{"stream", "orders"}}},
      {"PUT", "/v1/streams/orders", "declare", Scope::kAdmin, {{"stream", "orders"}}},
      {"DELETE", "/v1/streams/orders", "delete stream", Scope::kAdmin, {{"stream", "orders"}}},
      {"GET", "/v1/streams", "list streams", Scope::kRead, {}},
      {"GET", "/v1/streams/orders/sse", "sse", Scope::kRead, {{"stream", "orders"}}},
      {"POST", "/v1/streams/orders/groups/billing:consume", "consume", Scope::kConsume,
       {{"stream", "orders"}, {"group", "billing"}}},
      {"POST", "/v1/streams/orders/groups/billing:commit", "commit", Scope::kConsume,
       {{"stream", "orders"}, {"group", "billing"}}},
      {"POST", "/v1/streams/orders/groups/billing:seek", "seek", Scope::kAdmin,
       {{"stream", "orders"}, {"group", "billing"}}},
      {"GET", "/v1/streams/orders/groups/billing", "describe group", Scope::kRead,
       {{"stream", "orders"}, {"group", "billing"}}},
      {"GET", "/v1/streams/orders/groups", "list groups", Scope::kRead, {{"stream", "orders"}}},
      {"GET", "/v1/streams/orders/dead-letters", "dead letters", Scope::kAdmin,
       {{"stream", "orders"}}},
      {"GET", "/v1/streams/orders/dead-letters/7", "dead letter", Scope::kAdmin,
       {{"stream", "orders"}, {"sequence", "7"}}},
      {"POST", "/v1/streams/orders/dead-letters/7:republish", "republish", Scope::kAdmin,
       {{"stream", "orders"}, {"sequence", "7"}}},
      {"POST", "/v1/subscriptions", "create subscription", Scope::kAdmin, {}},
      {"GET", "/v1/subscriptions", "list subscriptions", Scope::kAdmin, {}},
      {"GET", "/v1/subscriptions/billing", "describe subscription", Scope::kAdmin,
       {{"name", "billing"}}},
      {"DELETE", "/v1/subscriptions/billing", "delete subscription", Scope::kAdmin,
       {{"name", "billing"}}},
      {"POST", "/v1/subscriptions/billing:pause", "pause subscription", Scope::kAdmin,
       {{"name", "billing"}}},
      {"POST", "/v1/subscriptions/billing:resume", "resume subscription", Scope::kAdmin,
       {{"name", "billing"}}},
      {"POST", "/v1/subscriptions/billing:secrets", "rotate subscription secrets", Scope::kAdmin,
       {{"name", "billing"}}},
      {"POST", "/v1/subscriptions/billing:redrive", "redrive subscription", Scope::kAdmin,
       {{"name", "billing"}}},
      {"GET", "/v1/streams/orders/cursor", "cursor at sequence", Scope::kRead,
       {{"stream", "orders"}}},
      {"PUT", "/v1/collections/users/docs/ada", "put document", Scope::kPublish,
       {{"stream", "users"}, {"id", "ada"}}},
      {"GET", "/v1/collections/users/docs/ada", "get document", Scope::kRead,
       {{"stream", "users"}, {"id", "ada"}}},
      {"DELETE", "/v1/collections/users/docs/ada", "delete document", Scope::kPublish,
       {{"stream", "users"}, {"id", "ada"}}},
      {"GET", "/v1/collections/users/docs/ada/history", "document history", Scope::kRead,
       {{"stream", "users"}, {"id", "ada"}}},
      {"GET", "/healthz", "health", Scope::kNone, {}},
      {"GET", "/readyz", "readiness", Scope::kNone, {}},
      {"GET", "/metrics", "metrics", Scope::kReadAll, {}},
      // clang-format on
  };
  std::set<std::string> resolved;
  for (const auto& want : routes) {
    SCOPED_TRACE(want.method + " " + want.path);
    const HttpRequest request = Request(want.method, want.path);
    const RouteMatch match = Api::Resolve(request);
    ASSERT_NE(match.route, nullptr);
    EXPECT_EQ(match.route->name, want.route);
    EXPECT_EQ(match.route->method, want.method);
    EXPECT_EQ(match.route->scope, want.scope);
    EXPECT_EQ(match.route->streamed(), want.route == "sse") << "only SSE is streamed";
    for (const auto& [name, value] : want.params) EXPECT_EQ(match.params.Get(name), value) << name;
    EXPECT_EQ(match.params.Get("absent"), "");
    EXPECT_EQ(Api::IsPublish(match), want.route == "publish");
    resolved.insert(want.route);
  }
  // Every route of the table is one of the documented ones.
  EXPECT_EQ(resolved.size(), std::size(routes));
  EXPECT_EQ(Api::Routes().size(), std::size(routes));
}

TEST(ApiRoutesTest, NamesAreMatchedDecodedAndWhole) {
  // An encoded '/' stays inside its segment: the route is found, and the
  // name (then refused as a stream name) is the decoded one.
  const HttpRequest slash =
      Request("GET", "/v1/streams/orders%2Feu/events", {"v1", "streams", "orders/eu", "events"});
  RouteMatch match = Api::Resolve(slash);
  ASSERT_NE(match.route, nullptr);
  EXPECT_EQ(match.route->name, "replay");
  EXPECT_EQ(match.params.Get("stream"), "orders/eu");

  const HttpRequest dots = Request("POST", "/v1/streams/orders.v2/events");
  match = Api::Resolve(dots);
  ASSERT_NE(match.route, nullptr);
  EXPECT_EQ(match.params.Get("stream"), "orders.v2");

  // A group name may hold ':': the action is what follows the last one.
  const HttpRequest colons = Request("POST", "/v1/streams/s/groups/team:billing:consume");
  match = Api::Resolve(colons);
  ASSERT_NE(match.route, nullptr);
  EXPECT_EQ(match.route->name, "consume");
  EXPECT_EQ(match.params.Get("group"), "team:billing");
  const HttpRequest described = Request("GET", "/v1/streams/s/groups/team:billing");
  match = Api::Resolve(described);
  ASSERT_NE(match.route, nullptr);
  EXPECT_EQ(match.route->name, "describe group");
  EXPECT_EQ(match.params.Get("group"), "team:billing");
}

TEST(ApiRoutesTest, AnUnknownPathIsNotFound) {
  for (const char* path :
       {"/", "/v2/streams", "/v1", "/v1/streams/s/bogus", "/v1/streams/s/events/1",
        "/v1/streams/s/sse/x", "/v1/streams/s/groups/g/x", "/v1/streams/s/dead-letters/1/x",
        "/healthz/x", "/metrics/"}) {
    SCOPED_TRACE(path);
    const HttpRequest request = Request("GET", path);
    const RouteMatch match = Api::Resolve(request);
    EXPECT_EQ(match.route, nullptr);
    EXPECT_FALSE(match.path_found());
  }
}

// Literals are compared a few bytes at a time: a byte off anywhere in a
// literal segment or in the method misses the route.
TEST(ApiRoutesTest, APathOrMethodOneByteOffMissesTheRoute) {
  const std::vector<std::string> publish = {"v1", "streams", "orders", "events"};
  for (size_t segment : {0, 1, 3}) {
    for (size_t at = 0; at < publish[segment].size(); ++at) {
      std::vector<std::string> segments = publish;
      segments[segment][at] = '_';
      SCOPED_TRACE(absl::StrJoin(segments, "/"));
      const HttpRequest request = Request("POST", "/" + absl::StrJoin(segments, "/"), segments);
      EXPECT_EQ(Api::Resolve(request).route, nullptr);
    }
  }
  for (const char* method : {"_OST", "P_ST", "PO_T", "POS_", "POS", "POSTS", "post"}) {
    SCOPED_TRACE(method);
    const HttpRequest request = Request(method, "/v1/streams/orders/events", publish);
    const RouteMatch match = Api::Resolve(request);
    EXPECT_EQ(match.route, nullptr);
    EXPECT_EQ(match.allow, "GET, POST");
  }
  const std::vector<std::string> dead_letters = {"v1", "streams", "s", "dead-letters"};
  for (size_t at = 0; at < dead_letters[3].size(); ++at) {
    std::vector<std::string> segments = dead_letters;
    segments[3][at] = '_';
    SCOPED_TRACE(segments[3]);
    EXPECT_FALSE(Api::Resolve(Request("GET", "/", segments)).path_found());
  }
}

TEST(ApiRoutesTest, AKnownPathWithAnotherMethodIsNotAllowedNamingItsMethods) {
  const struct {
    std::string method;
    std::string path;
    std::string allow;
  } cases[] = {
      {"DELETE", "/v1/streams/s/events", "GET, POST"},
      {"PATCH", "/v1/streams/s", "DELETE, GET, PUT"},
      {"POST", "/v1/streams", "GET"},
      {"POST", "/v1/streams/s/sse", "GET"},
      {"GET", "/v1/streams/s/groups/g:consume", "POST"},
      {"POST", "/v1/streams/s/groups/g", "GET"},
      {"PUT", "/v1/streams/s/groups", "GET"},
      {"GET", "/v1/streams/s/dead-letters/1:republish", "POST"},
      {"POST", "/v1/streams/s/dead-letters/1", "GET"},
      {"POST", "/metrics", "GET"},
      {"HEAD", "/healthz", "GET"},
      {"OPTIONS", "/readyz", "GET"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.method + " " + c.path);
    const HttpRequest request = Request(c.method, c.path);
    const RouteMatch match = Api::Resolve(request);
    EXPECT_EQ(match.route, nullptr);
    EXPECT_TRUE(match.path_found());
    EXPECT_EQ(match.allow, c.allow);
  }
  // Only the probes' paths are open to anyone, whatever the method.
  EXPECT_TRUE(Api::Resolve(Request("POST", "/healthz")).open_path);
  EXPECT_FALSE(Api::Resolve(Request("POST", "/metrics")).open_path);
}

TEST(RouteTableTest, TheFirstPatternThatFitsDecidesThePath) {
  // The action's pattern first, as the API's table has it: "b:go" is the
  // action, and GET on it is 405.
  const RouteTable specific_first({
      {"POST", "/a/{x}:go", Scope::kPublish, "go", nullptr},
      {"GET", "/a/{x}", Scope::kRead, "show", nullptr},
  });
  const std::vector<std::string> action = {"a", "b:go"};
  RouteMatch match = specific_first.Match("GET", action);
  EXPECT_EQ(match.route, nullptr);
  EXPECT_EQ(match.allow, "POST");
  match = specific_first.Match("POST", action);
  ASSERT_NE(match.route, nullptr);
  EXPECT_EQ(match.route->name, "go");
  EXPECT_EQ(match.params.Get("x"), "b");
  // An empty segment is a name too (the handler judges it).
  const std::vector<std::string> unnamed = {"a", ":go"};
  match = specific_first.Match("POST", unnamed);
  ASSERT_NE(match.route, nullptr);
  EXPECT_EQ(match.params.Get("x"), "");

  // The other order: the broader pattern takes the path.
  const RouteTable broad_first({
      {"GET", "/a/{x}", Scope::kRead, "show", nullptr},
      {"POST", "/a/{x}:go", Scope::kPublish, "go", nullptr},
  });
  match = broad_first.Match("GET", action);
  ASSERT_NE(match.route, nullptr);
  EXPECT_EQ(match.route->name, "show");
  EXPECT_EQ(match.params.Get("x"), "b:go");
}

TEST(RouteTableTest, RoutesOfOnePatternAreItsMethodsAllowedInOrder) {
  const RouteTable table({
      {"PUT", "/s/{id}", Scope::kAdmin, "put", nullptr},
      {"GET", "/s/{id}", Scope::kRead, "get", nullptr},
      {"DELETE", "/s/{id}", Scope::kAdmin, "delete", nullptr},
      {"GET", "/s", Scope::kRead, "list", nullptr},
  });
  const std::vector<std::string> one = {"s", "1"};
  const RouteMatch match = table.Match("PATCH", one);
  EXPECT_EQ(match.route, nullptr);
  EXPECT_EQ(match.allow, "DELETE, GET, PUT");
  const RouteMatch get = table.Match("GET", one);
  ASSERT_NE(get.route, nullptr);
  EXPECT_EQ(get.route->name, "get");
  EXPECT_EQ(get.params.Get("id"), "1");
  EXPECT_FALSE(table.Match("GET", std::vector<std::string>{"t"}).path_found());
}

}  // namespace
}  // namespace keel::server
