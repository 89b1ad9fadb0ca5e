// RouteTable without sockets: which pattern decides a path, and the Allow
// of a known path.
#include "cmd/keel/server/route_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace keel::server {
namespace {

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
