// JwtKeys: the keys a daemon verifies JSON Web Tokens with (rfcs/0004 §13),
// read from its configuration: an HS256 secret from a file, a PEM public key
// (RSA for RS256, EC P-256 for ES256) and a JWKS file (RFC 7517: `kty` RSA,
// EC with `crv` P-256, or oct; keys of `use` other than `sig` are skipped).
//
// Each key is bound to the one algorithm its type allows, so a token cannot
// choose how its signature is checked: an RS256 public key is never taken
// as an HS256 secret, and `alg: none` has no key.
//
// Thread safety: immutable once loaded; the keys may be used concurrently
// (OpenSSL 3 keys are safe to share for verification).
#ifndef KEEL_CMD_KEEL_SERVER_JWT_KEYS_H_
#define KEEL_CMD_KEEL_SERVER_JWT_KEYS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

typedef struct evp_pkey_st EVP_PKEY;

namespace keel::server {

enum class JwtAlgorithm { kHs256, kRs256, kEs256 };

absl::string_view JwtAlgorithmName(JwtAlgorithm algorithm);

struct JwtKey {
  std::string kid;  // "" when the key has none (a PEM file, the secret file).
  JwtAlgorithm algorithm = JwtAlgorithm::kHs256;
  std::string secret;             // kHs256.
  std::shared_ptr<EVP_PKEY> key;  // kRs256, kEs256: the public key.
};

// Least HS256 secret: RFC 7518 §3.2 asks for a key as long as the hash.
inline constexpr size_t kMinHs256SecretBytes = 32;
// Least RSA modulus (RFC 7518 §3.3).
inline constexpr int kMinRsaBits = 2048;

// The secret in the file at `path`, trailing line breaks removed.
absl::StatusOr<JwtKey> LoadHs256Secret(const std::string& path);
// The public key in the PEM file at `path`.
absl::StatusOr<JwtKey> LoadPemPublicKey(const std::string& path);
// The public key in PEM text.
absl::StatusOr<JwtKey> ParsePemPublicKey(absl::string_view pem);
// The signing keys of a JWKS document.
absl::StatusOr<std::vector<JwtKey>> ParseJwks(absl::string_view json);
absl::StatusOr<std::vector<JwtKey>> LoadJwks(const std::string& path);

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_JWT_KEYS_H_
