// Authenticator: turns a bearer token into its Grant — a static token of
// the tokens file (AccessTokens) or a JSON Web Token (JwtVerifier) — and
// re-reads both sources on Reload (the daemon's SIGHUP).
//
// A token with a JWT's shape (three dot-separated parts) is verified as a
// JWT when JWTs are configured; any other token, or every token when they
// are not, is looked up in the tokens file.
//
// Reload reads everything first and swaps it in only when all of it loaded:
// a file broken while being edited leaves the daemon on the previous
// credentials (and Reload says why), never on none. Requests already
// admitted keep the grant they were admitted with; open SSE streams are not
// checked again.
//
// Thread safety: Authenticate and Reload may be called concurrently.
#ifndef KEEL_CMD_KEEL_SERVER_AUTHENTICATOR_H_
#define KEEL_CMD_KEEL_SERVER_AUTHENTICATOR_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/cmd/keel/server/access_tokens.h"
#include "keel/cmd/keel/server/grant.h"
#include "keel/cmd/keel/server/jwt_verifier.h"
#include "keel/core/mutex.h"

namespace keel::server {

struct AuthOptions {
  std::string tokens_file;  // `--auth-tokens`; "" for none.
  JwtOptions jwt;           // Not configured(): no JWTs.

  bool configured() const { return !tokens_file.empty() || jwt.configured(); }
};

class Authenticator {
 public:
  // Loads what `options` names (see AccessTokens::Load, JwtVerifier::Load).
  static absl::StatusOr<std::unique_ptr<Authenticator>> Load(AuthOptions options);
  // Static tokens only, from text, not reloadable (tests, embedding hosts).
  static absl::StatusOr<std::unique_ptr<Authenticator>> FromTokens(absl::string_view text);

  // The grant of `token`: kUnauthenticated, with the reason, when it is
  // neither a known static token nor a valid JWT.
  absl::StatusOr<std::shared_ptr<const Grant>> Authenticate(absl::string_view token,
                                                            absl::Time now) const;

  // Re-reads the tokens file and the JWT keys; on an error keeps what it
  // had and returns the error.
  absl::Status Reload();

  // The tokens file's lines that hold a token in clear text (warned about).
  std::vector<int> LegacyLines() const;

 private:
  struct Sources {
    std::shared_ptr<const AccessTokens> tokens;  // Null without a tokens file.
    std::shared_ptr<const JwtVerifier> jwt;      // Null without JWT keys.
  };
  static absl::StatusOr<Sources> Read(const AuthOptions& options);

  explicit Authenticator(AuthOptions options, Sources sources)
      : options_(std::move(options)), sources_(std::move(sources)) {}

  Sources Current() const;

  const AuthOptions options_;
  mutable Mutex mu_;
  Sources sources_ ABSL_GUARDED_BY(mu_);
};

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_AUTHENTICATOR_H_
