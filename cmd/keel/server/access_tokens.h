// AccessTokens: the bearer tokens a daemon accepts, each with what it may do.
//
// A daemon started with `--auth-tokens FILE` serves only requests that carry
// one of its tokens (RequestGate, rfcs/0004-http-api.md "Authentication").
// The file has one token per line, `<access> <token>`: access `read` may
// use the routes that need Scope::kRead (the GET routes: replay, bounds,
// lists, SSE, groups, dead letters, metrics), `write` every route. Blank
// lines and lines starting with `#` are skipped. A token is at least
// kMinTokenLength printable ASCII characters without spaces: a short one is
// refused when the file is read, not guessed later.
//
// Thread safety: immutable after Parse; Find may be called concurrently.
#ifndef KEEL_CMD_KEEL_SERVER_ACCESS_TOKENS_H_
#define KEEL_CMD_KEEL_SERVER_ACCESS_TOKENS_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace keel::server {

enum class Access { kRead, kWrite };

// What a route needs of a token (RouteTable): each route declares one, and
// a token passes where its access allows that scope (Allows).
enum class Scope {
  kNone,     // Anyone, without a token or a rate limit: health probes.
  kRead,     // Reads: replay, bounds, lists, SSE, groups, dead letters, metrics.
  kConsume,  // Moves a consumer group through its stream: consume, commit.
  kPublish,  // Appends events to a stream.
  kAdmin,    // Changes what others see: declarations, a group's seek, republishing.
};

// Whether a token with `access` may use a route that needs `scope`: `read`
// only reads, `write` may do everything.
bool Allows(Access access, Scope scope);

class AccessTokens {
 public:
  static constexpr size_t kMinTokenLength = 16;

  // Parses the file's text; kInvalidArgument names the first bad line.
  static absl::StatusOr<AccessTokens> Parse(absl::string_view text);
  // Reads and parses the file at `path`; kNotFound when it cannot be read.
  static absl::StatusOr<AccessTokens> Load(const std::string& path);

  // The access of `token`, or nullopt for a token not in the file. Every
  // token is compared in full, so the time taken does not tell how much of
  // a guess was right.
  std::optional<Access> Find(absl::string_view token) const;
  size_t size() const { return tokens_.size(); }

 private:
  std::vector<std::pair<std::string, Access>> tokens_;
};

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_ACCESS_TOKENS_H_
