#include "keel/cmd/keel/server/grant.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "keel/core/errors.h"
#include "keel/core/publish_validation.h"

namespace keel::server {
namespace {

constexpr absl::string_view kTenantWord = "tenant=";
constexpr char kGroupSeparator = ':';

// The stream-name alphabet, [A-Za-z0-9._:-]: prefixes and tenants use it.
bool IsNameText(absl::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == ':' || c == '-';
  });
}

std::optional<TokenScope> ScopeNamed(absl::string_view name) {
  if (name == "publish") return TokenScope::kPublish;
  if (name == "read") return TokenScope::kRead;
  if (name == "admin") return TokenScope::kAdmin;
  return std::nullopt;
}

bool AnyPrefixOf(const std::vector<std::string>& prefixes, absl::string_view stream) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](const std::string& prefix) { return absl::StartsWith(stream, prefix); });
}

}  // namespace

absl::string_view TokenScopeName(TokenScope scope) {
  switch (scope) {
    case TokenScope::kPublish:
      return "publish";
    case TokenScope::kRead:
      return "read";
    case TokenScope::kAdmin:
      return "admin";
  }
  return "?";
}

Grant Grant::All() {
  Grant grant;
  grant.publish_ = {""};
  grant.read_ = {""};
  grant.admin_ = {""};
  return grant;
}

absl::StatusOr<Grant> Grant::Parse(absl::Span<const std::string> words) {
  std::vector<absl::string_view> views(words.begin(), words.end());
  return Parse(absl::MakeConstSpan(views));
}

absl::StatusOr<Grant> Grant::Parse(absl::Span<const absl::string_view> words) {
  Grant grant;
  bool tenant_seen = false;
  for (absl::string_view word : words) {
    if (absl::ConsumePrefix(&word, kTenantWord)) {
      if (tenant_seen) return InvalidArgument("the tenant is given twice");
      if (word.empty() || word.size() > kMaxNameLength || !IsNameText(word) ||
          absl::StrContains(word, kGroupSeparator)) {
        return InvalidArgument(
            absl::StrCat("tenant '", word,
                         "' is not 1-255 characters of [A-Za-z0-9._-] (no ':', which "
                         "separates a tenant from the rest of its groups' names)"));
      }
      grant.tenant_ = std::string(word);
      tenant_seen = true;
      continue;
    }
    const size_t colon = word.find(':');
    const absl::string_view name = word.substr(0, colon);
    absl::string_view prefix =
        colon == absl::string_view::npos ? absl::string_view() : word.substr(colon + 1);
    const std::optional<TokenScope> scope = ScopeNamed(name);
    if (!scope) {
      return InvalidArgument(absl::StrCat("'", word,
                                          "' is not a scope: want publish, read or admin, "
                                          "optionally ':<stream prefix>', or tenant=<tenant>"));
    }
    if (prefix == "*") prefix = "";
    if (prefix.size() > kMaxNameLength || !IsNameText(prefix)) {
      return InvalidArgument(
          absl::StrCat("'", word, "': a stream prefix is at most 255 of [A-Za-z0-9._:-], or '*'"));
    }
    std::vector<std::string>& prefixes = grant.MutablePrefixes(*scope);
    if (std::find(prefixes.begin(), prefixes.end(), prefix) == prefixes.end()) {
      prefixes.emplace_back(prefix);
    }
  }
  if (grant.publish_.empty() && grant.read_.empty() && grant.admin_.empty()) {
    return InvalidArgument("no scope: give at least one of publish, read, admin");
  }
  if (!grant.tenant_.empty() && !grant.admin_.empty()) {
    return InvalidArgument(
        "admin acts on whole streams, across tenants: a token with a tenant cannot have it");
  }
  return grant;
}

std::vector<std::string>& Grant::MutablePrefixes(TokenScope scope) {
  return const_cast<std::vector<std::string>&>(std::as_const(*this).Prefixes(scope));
}

const std::vector<std::string>& Grant::Prefixes(TokenScope scope) const {
  switch (scope) {
    case TokenScope::kPublish:
      return publish_;
    case TokenScope::kRead:
      return read_;
    case TokenScope::kAdmin:
      return admin_;
  }
  return admin_;
}

bool Grant::Covers(TokenScope scope, absl::string_view stream) const {
  return AnyPrefixOf(Prefixes(scope), stream);
}

bool Grant::CoversEverything(TokenScope scope) const {
  const std::vector<std::string>& prefixes = Prefixes(scope);
  return std::find(prefixes.begin(), prefixes.end(), "") != prefixes.end();
}

bool Grant::OwnsGroup(absl::string_view group) const {
  if (tenant_.empty()) return true;
  return group.size() > tenant_.size() + 1 && absl::StartsWith(group, tenant_) &&
         group[tenant_.size()] == kGroupSeparator;
}

std::optional<MissingScope> Grant::Missing(Scope needed, absl::string_view stream,
                                           absl::string_view group) const {
  TokenScope scope = TokenScope::kRead;
  switch (needed) {
    case Scope::kNone:
      return std::nullopt;
    case Scope::kRead:
    case Scope::kConsume:
      scope = TokenScope::kRead;
      break;
    case Scope::kPublish:
      scope = TokenScope::kPublish;
      break;
    case Scope::kAdmin:
      scope = TokenScope::kAdmin;
      break;
    case Scope::kReadAll:
      if (CoversEverything(TokenScope::kRead) && tenant_.empty()) return std::nullopt;
      return MissingScope{TokenScope::kRead, "",
                          "this route shows every stream: it needs read on every stream ('read' "
                          "or 'read:*') and a token without a tenant"};
  }
  const absl::string_view name = TokenScopeName(scope);
  if (stream.empty()) {
    // A route over many streams (the stream list): any prefix will do, and
    // the handler shows only what the grant opens.
    if (!Prefixes(scope).empty()) return std::nullopt;
    return MissingScope{scope, "", absl::StrCat("the token has no ", name, " scope")};
  }
  if (!Covers(scope, stream)) {
    return MissingScope{scope, std::string(stream),
                        absl::StrCat("the token lacks ", name, " on stream '", stream, "'")};
  }
  if (!group.empty() && !OwnsGroup(group)) {
    return MissingScope{scope, std::string(stream),
                        absl::StrCat("the token's tenant '", tenant_,
                                     "' uses only consumer groups named '", tenant_, ":…'")};
  }
  return std::nullopt;
}

std::string Grant::ToString() const {
  std::vector<std::string> words;
  for (TokenScope scope : {TokenScope::kPublish, TokenScope::kRead, TokenScope::kAdmin}) {
    for (const std::string& prefix : Prefixes(scope)) {
      words.push_back(prefix.empty() ? std::string(TokenScopeName(scope))
                                     : absl::StrCat(TokenScopeName(scope), ":", prefix));
    }
  }
  if (!tenant_.empty()) words.push_back(absl::StrCat(kTenantWord, tenant_));
  return absl::StrJoin(words, " ");
}

}  // namespace keel::server
