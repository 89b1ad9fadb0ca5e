// A grant's text form and what it opens, without sockets: scopes on stream
// prefixes, the tenant, and what each route needs (rfcs/0004 §13).
#include "keel/cmd/keel/server/grant.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "keel/cmd/keel/server/grant_filters.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Grant Parsed(std::vector<std::string> words) {
  absl::StatusOr<Grant> grant = Grant::Parse(absl::MakeConstSpan(words));
  EXPECT_OK(grant);
  return grant.ok() ? *grant : Grant();
}

// The scope a grant lacks for a request, as "read:orders", or "ok".
std::string MissingOf(const Grant& grant, Scope needed, absl::string_view stream,
                      absl::string_view group = "") {
  std::optional<MissingScope> missing = grant.Missing(needed, stream, group);
  if (!missing) return "ok";
  return missing->stream.empty()
             ? std::string(TokenScopeName(missing->scope))
             : absl::StrCat(TokenScopeName(missing->scope), ":", missing->stream);
}

TEST(GrantTest, ParsesScopesOnPrefixesAndATenantAndPrintsThemBack) {
  const Grant grant =
      Parsed({"read:orders.", "publish:orders.eu.", "read:billing.", "tenant=acme"});
  EXPECT_EQ(grant.ToString(), "publish:orders.eu. read:orders. read:billing. tenant=acme");
  EXPECT_EQ(grant.tenant(), "acme");
  EXPECT_EQ(Parsed({"read", "publish:*", "admin"}).ToString(), "publish read admin");
  EXPECT_TRUE(Parsed({"read:*"}).CoversEverything(TokenScope::kRead));
  EXPECT_EQ(Parsed({"read", "read"}).ToString(), "read");  // Repeats count once.
  EXPECT_EQ(Grant::All().ToString(), "publish read admin");
}

TEST(GrantTest, RefusesWhatIsNotAScopeNamingTheWord) {
  const struct {
    std::vector<std::string> words;
    std::string message;
  } cases[] = {
      {{}, "no scope"},
      {{"tenant=acme"}, "no scope"},
      {{"write"}, "'write' is not a scope"},
      {{"reading"}, "'reading' is not a scope"},
      {{"read:orders/eu"}, "'read:orders/eu': a stream prefix"},
      {{"read", "tenant="}, "tenant '' is not"},
      {{"read", "tenant=ac me"}, "tenant 'ac me' is not"},
      {{"read", "tenant=acme:eu"}, "no ':'"},
      {{"read", "tenant=a", "tenant=b"}, "the tenant is given twice"},
      {{"admin", "tenant=acme"}, "admin acts on whole streams"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::PrintToString(c.words));
    absl::StatusOr<Grant> grant = Grant::Parse(absl::MakeConstSpan(c.words));
    ASSERT_FALSE(grant.ok());
    EXPECT_EQ(grant.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(grant.status().message()), HasSubstr(c.message));
  }
}

TEST(GrantTest, EachRouteNeedsItsScopeOnTheRoutesStream) {
  const Grant grant = Parsed({"publish:orders.", "read:orders.", "read:audit"});
  EXPECT_EQ(MissingOf(grant, Scope::kPublish, "orders.eu"), "ok");
  EXPECT_EQ(MissingOf(grant, Scope::kPublish, "billing"), "publish:billing");
  EXPECT_EQ(MissingOf(grant, Scope::kPublish, "orders"), "publish:orders");  // Not "orders.".
  EXPECT_EQ(MissingOf(grant, Scope::kRead, "orders.eu"), "ok");
  EXPECT_EQ(MissingOf(grant, Scope::kRead, "audit-2026"), "ok");  // Prefixes are plain text.
  EXPECT_EQ(MissingOf(grant, Scope::kRead, "billing"), "read:billing");
  // Consuming through a group is reading.
  EXPECT_EQ(MissingOf(grant, Scope::kConsume, "orders.eu", "worker"), "ok");
  EXPECT_EQ(MissingOf(grant, Scope::kConsume, "billing", "worker"), "read:billing");
  EXPECT_EQ(MissingOf(grant, Scope::kAdmin, "orders.eu"), "admin:orders.eu");
  EXPECT_EQ(MissingOf(grant, Scope::kNone, "anything"), "ok");
  // The stream list needs read on something; /metrics on everything.
  EXPECT_EQ(MissingOf(grant, Scope::kRead, ""), "ok");
  EXPECT_EQ(MissingOf(Parsed({"publish"}), Scope::kRead, ""), "read");
  EXPECT_EQ(MissingOf(grant, Scope::kReadAll, ""), "read");
  EXPECT_EQ(MissingOf(Parsed({"read"}), Scope::kReadAll, ""), "ok");
  EXPECT_EQ(MissingOf(Parsed({"read", "tenant=acme"}), Scope::kReadAll, ""), "read");
}

TEST(GrantTest, ATenantUsesOnlyTheConsumerGroupsNamedAfterIt) {
  const Grant acme = Parsed({"read", "tenant=acme"});
  EXPECT_TRUE(acme.OwnsGroup("acme:billing"));
  EXPECT_FALSE(acme.OwnsGroup("billing"));
  EXPECT_FALSE(acme.OwnsGroup("acme"));
  EXPECT_FALSE(acme.OwnsGroup("acme:"));
  EXPECT_FALSE(acme.OwnsGroup("acmecorp:billing"));
  EXPECT_FALSE(acme.OwnsGroup("acme.eu:billing"));
  EXPECT_EQ(MissingOf(acme, Scope::kConsume, "orders", "acme:billing"), "ok");
  EXPECT_EQ(MissingOf(acme, Scope::kConsume, "orders", "globex:billing"), "read:orders");
  EXPECT_TRUE(Parsed({"read"}).OwnsGroup("anything"));
}

TEST(GrantTest, AListShowsOnlyTheStreamsUnderTheGrantsReadPrefixes) {
  auto prefixes = [](std::vector<std::string> words, absl::string_view asked) {
    HttpRequest request;
    request.grant = std::make_shared<const Grant>(Parsed(std::move(words)));
    return ListPrefixes(request, asked);
  };
  EXPECT_THAT(prefixes({"read"}, "ord"), ElementsAre("ord"));
  EXPECT_THAT(prefixes({"read:orders.", "read:audit."}, ""), ElementsAre("orders.", "audit."));
  EXPECT_THAT(prefixes({"read:orders.", "read:audit."}, "orders.eu"), ElementsAre("orders.eu"));
  EXPECT_THAT(prefixes({"read:orders.", "read:audit."}, "ord"), ElementsAre("orders."));
  EXPECT_THAT(prefixes({"read:orders."}, "billing"), ElementsAre());
  EXPECT_THAT(ListPrefixes(HttpRequest(), "x"), ElementsAre("x"));  // No credentials checked.
}

TEST(GrantTest, ATenantBoundRequestReadsAndPublishesOnlyItsTenant) {
  HttpRequest request;
  request.grant = std::make_shared<const Grant>(Parsed({"read", "publish", "tenant=acme"}));
  ASSERT_OK_AND_ASSIGN(EventFilter filter, ReadFilter(request));
  EXPECT_EQ(filter.tenant, "acme");
  request.query["tenant"] = "acme";
  EXPECT_OK(ReadFilter(request).status());
  request.query["tenant"] = "globex";
  EXPECT_EQ(ReadFilter(request).status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(ScopeDeniedDetails(ReadFilter(request).status()), "\"scope\":\"read\"");

  std::vector<Event> events(2);
  events[1].tenant = "acme";
  ASSERT_OK(StampTenant(request, events));
  EXPECT_EQ(events[0].tenant, "acme");  // Stamped.
  events.emplace_back().tenant = "globex";
  EXPECT_EQ(StampTenant(request, events).code(), absl::StatusCode::kPermissionDenied);

  std::vector<Event> page(3);
  page[0].tenant = "acme";
  page[1].tenant = "globex";
  KeepTenant("acme", page);
  ASSERT_EQ(page.size(), 1u);
  EXPECT_EQ(page[0].tenant, "acme");
}

}  // namespace
}  // namespace keel::server
