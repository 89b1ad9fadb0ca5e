#include "keel/cmd/keel/server/route_table.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/base/attributes.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace keel::server {
namespace {

// A malformed pattern is a mistake in the program's own table: caught by
// the first test that builds it.
void Require(bool ok, absl::string_view pattern, const char* why) {
  if (ok) return;
  std::fprintf(stderr, "keel: route pattern '%.*s': %s\n", static_cast<int>(pattern.size()),
               pattern.data(), why);
  std::abort();
}

// Whether `a` and `b` hold the same text. Literals and methods are a few
// bytes: up to 8 are compared as two overlapping 4-byte words (under 4, as
// their first, middle and last bytes), inline, where a memcmp call for each
// cost a publish more than all the rest of its matching.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool SameText(absl::string_view a, absl::string_view b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  if (n > 8) return std::memcmp(a.data(), b.data(), n) == 0;
  if (n >= 4) {
    uint32_t a_head, b_head, a_tail, b_tail;
    std::memcpy(&a_head, a.data(), 4);
    std::memcpy(&b_head, b.data(), 4);
    std::memcpy(&a_tail, a.data() + n - 4, 4);
    std::memcpy(&b_tail, b.data() + n - 4, 4);
    return a_head == b_head && a_tail == b_tail;
  }
  if (n == 0) return true;
  return a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1];
}

}  // namespace

absl::string_view RouteParams::Get(absl::string_view name) const {
  if (named_ == nullptr) return absl::string_view();
  for (const Named& named : *named_) {
    if (SameText(named.name, name)) {
      const std::string& segment = segments_[named.segment];
      return absl::string_view(segment.data(), segment.size() - named.suffix);
    }
  }
  return absl::string_view();
}

RouteTable::RouteTable(std::vector<Route> routes) : routes_(std::move(routes)) {
  std::vector<absl::string_view> patterns;  // Of paths_, same index.
  for (const Route& route : routes_) {
    auto known = std::find(patterns.begin(), patterns.end(), route.pattern);
    if (known == patterns.end()) {
      Require(absl::StartsWith(route.pattern, "/"), route.pattern, "does not start with '/'");
      Path path;
      for (absl::string_view part : absl::StrSplit(route.pattern.substr(1), '/')) {
        Segment segment;
        if (absl::ConsumePrefix(&part, "{")) {
          const size_t close = part.find('}');
          Require(close != absl::string_view::npos && close > 0, route.pattern,
                  "a '{' without a name and '}'");
          segment.named = true;
          segment.literal = std::string(part.substr(close + 1));
          path.named.push_back(RouteParams::Named{std::string(part.substr(0, close)),
                                                  path.segments.size(), segment.literal.size()});
        } else {
          Require(!absl::StrContains(part, '{'), route.pattern, "a name inside a literal");
          segment.literal = std::string(part);
        }
        path.segments.push_back(std::move(segment));
      }
      patterns.push_back(route.pattern);
      paths_.push_back(std::move(path));
      known = patterns.end() - 1;
    }
    Path& path = paths_[known - patterns.begin()];
    path.routes.push_back(&route);
    path.open = path.open && route.scope == Scope::kNone;
  }
  for (Path& path : paths_) {
    std::vector<absl::string_view> methods;
    for (const Route* route : path.routes) methods.push_back(route->method);
    std::sort(methods.begin(), methods.end());
    methods.erase(std::unique(methods.begin(), methods.end()), methods.end());
    path.allow = absl::StrJoin(methods, ", ");
  }
}

bool RouteTable::Matches(const Path& path, absl::Span<const std::string> segments) {
  if (segments.size() != path.segments.size()) return false;
  for (size_t i = 0; i < segments.size(); ++i) {
    const Segment& want = path.segments[i];
    const std::string& got = segments[i];
    if (!want.named) {
      if (!SameText(got, want.literal)) return false;
    } else if (!want.literal.empty() && !absl::EndsWith(got, want.literal)) {
      return false;
    }
  }
  return true;
}

RouteMatch RouteTable::Match(absl::string_view method,
                             absl::Span<const std::string> segments) const {
  RouteMatch match;
  for (const Path& path : paths_) {
    if (!Matches(path, segments)) continue;
    match.allow = path.allow;
    match.open_path = path.open;
    match.params.named_ = &path.named;
    match.params.segments_ = segments.data();
    for (const Route* route : path.routes) {
      if (SameText(route->method, method)) {
        match.route = route;
        break;
      }
    }
    return match;
  }
  return match;
}

}  // namespace keel::server
