// Grant: what one credential (a static token or a JWT) allows, and what a
// route needs of it (rfcs/0004-http-api.md §13).
//
// A grant holds three token scopes, each on stream-name prefixes:
//   publish  append events (POST …/events);
//   read     replay, bounds, SSE, the stream list, consumer groups (consume,
//            commit, describe, list) and /metrics;
//   admin    declarations, a group's seek, dead letters (list, show,
//            republish).
// and optionally a tenant: the grant then publishes only events of that
// tenant and reads only them (Api filters every read by it), uses only the
// consumer groups named `<tenant>:…`, and may not hold `admin` (which acts on
// whole streams, across tenants).
//
// Text form (the tokens file, `keel token hash`, a JWT's `keel.scopes`):
// one word per scope, `<scope>` or `<scope>:<prefix>` — `read:orders.` opens
// the streams whose names start with `orders.`; `read` (or `read:*`) opens
// every stream — and `tenant=<tenant>`. A prefix is matched as plain text:
// `read:orders` opens `orders2` as well, so end a prefix with its separator.
//
// Thread safety: a value; immutable once built.
#ifndef KEEL_CMD_KEEL_SERVER_GRANT_H_
#define KEEL_CMD_KEEL_SERVER_GRANT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace keel::server {

// What a route needs of a credential (RouteTable): each route declares one.
enum class Scope {
  kNone,     // Anyone, without a token or a rate limit: health probes.
  kRead,     // Reads of a stream, or the stream list (filtered to the grant).
  kConsume,  // Moves a consumer group through its stream: consume, commit. A
             // `read` grant's: consuming in a group is how a reader reads.
  kPublish,  // Appends events to a stream.
  kAdmin,    // Changes what others see or reads across tenants: declarations,
             // a group's seek, dead letters.
  kReadAll,  // Reads about every stream at once: /metrics names every stream
             // and group, so it needs `read` on every stream and no tenant.
};

// The scopes a credential carries.
enum class TokenScope { kPublish, kRead, kAdmin };

absl::string_view TokenScopeName(TokenScope scope);

// Why a grant does not allow a request: the scope it lacks, on `stream`
// ("" for one that needs the scope on every stream), in words for the 403.
struct MissingScope {
  TokenScope scope;
  std::string stream;
  std::string message;
};

class Grant {
 public:
  // Everything, no tenant: `write` lines of the tokens file.
  static Grant All();

  // Parses the text form, a word at a time. kInvalidArgument names the bad
  // word: an unknown scope, a prefix outside the stream-name alphabet, a
  // tenant that is not a valid tenant name or contains ':' (it separates the
  // tenant from the rest of its groups' names), admin with a tenant, a
  // tenant twice, or no scope at all.
  static absl::StatusOr<Grant> Parse(absl::Span<const absl::string_view> words);
  static absl::StatusOr<Grant> Parse(absl::Span<const std::string> words);

  // Whether the grant opens `stream` for `scope`.
  bool Covers(TokenScope scope, absl::string_view stream) const;
  // Whether it opens every stream for `scope`.
  bool CoversEverything(TokenScope scope) const;
  // The prefixes `scope` opens ("" is every stream); empty when none.
  const std::vector<std::string>& Prefixes(TokenScope scope) const;

  // What a request needing `needed` on `stream` (the route's {stream}, ""
  // on routes without one) and `group` (its {group}, or "") lacks; nullopt
  // when the grant allows it.
  std::optional<MissingScope> Missing(Scope needed, absl::string_view stream,
                                      absl::string_view group) const;

  // "" when the grant reads and publishes every tenant's events.
  const std::string& tenant() const { return tenant_; }
  // Whether a tenant-bound grant may use consumer group `group`: its name
  // starts with `<tenant>:`. Always for a grant without a tenant.
  bool OwnsGroup(absl::string_view group) const;

  // The text form: scopes in publish, read, admin order, then the tenant.
  std::string ToString() const;

 private:
  std::vector<std::string>& MutablePrefixes(TokenScope scope);

  std::vector<std::string> publish_;
  std::vector<std::string> read_;
  std::vector<std::string> admin_;
  std::string tenant_;
};

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_GRANT_H_
