// JwtVerifier: accepts JSON Web Tokens (RFC 7519) signed with HS256, RS256
// or ES256 by one of the configured JwtKeys, and reads their Grant
// (rfcs/0004-http-api.md §13).
//
// A token passes when, in this order:
//   - it is three base64url parts, its header's `alg` is HS256, RS256 or
//     ES256 and a configured key of that algorithm (of the header's `kid`,
//     when it has one) verifies its signature (OpenSSL EVP, comparisons of
//     HMACs in constant time);
//   - `exp` is present and `now` is before exp + leeway; `nbf`, when
//     present, is at or before now + leeway;
//   - `aud` (a string or an array) holds the configured audience, and `iss`
//     is the configured issuer when one is configured;
//   - its `keel` claim, `{"scopes": [...] or "...", "tenant": "..."}`, is a
//     valid grant (Grant's text form, a word per scope).
// Otherwise kUnauthenticated says which of these failed.
//
// Thread safety: immutable once made; Verify may be called concurrently.
#ifndef KEEL_CMD_KEEL_SERVER_JWT_VERIFIER_H_
#define KEEL_CMD_KEEL_SERVER_JWT_VERIFIER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/cmd/keel/server/grant.h"
#include "keel/cmd/keel/server/jwt_keys.h"

namespace keel::server {

struct JwtOptions {
  // Where the keys are; any of them, at least one.
  std::string hs256_secret_file;
  std::string public_key_file;  // PEM: RSA (RS256) or EC P-256 (ES256).
  std::string jwks_file;
  std::string audience;  // Required: a token must be meant for this daemon.
  std::string issuer;    // When set, `iss` must equal it.
  // Clock difference forgiven between the token's issuer and this daemon.
  absl::Duration leeway = absl::Seconds(30);

  bool configured() const {
    return !hs256_secret_file.empty() || !public_key_file.empty() || !jwks_file.empty();
  }
};

// Longest token read: headers bound it anyway, this bounds the work.
inline constexpr size_t kMaxJwtBytes = 8 << 10;

class JwtVerifier {
 public:
  // Reads the keys `options` names. kInvalidArgument for options without a
  // key or an audience, or a key that does not load; kNotFound for a file
  // that cannot be read.
  static absl::StatusOr<std::unique_ptr<JwtVerifier>> Load(const JwtOptions& options);
  JwtVerifier(JwtOptions options, std::vector<JwtKey> keys)
      : options_(std::move(options)), keys_(std::move(keys)) {}

  // Whether `token` has a JWT's shape (three dot-separated parts), to tell
  // it from a static token.
  static bool LooksLikeJwt(absl::string_view token);

  absl::StatusOr<Grant> Verify(absl::string_view token, absl::Time now) const;

 private:
  bool SignatureVerifies(JwtAlgorithm algorithm, absl::string_view kid,
                         absl::string_view signed_part, absl::string_view signature) const;

  const JwtOptions options_;
  const std::vector<JwtKey> keys_;
};

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_JWT_VERIFIER_H_
