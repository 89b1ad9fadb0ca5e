// Test support: keys made with OpenSSL in the test (an HS256 secret, an RSA
// 2048 key, an EC P-256 key), their public forms as the daemon reads them
// (PEM, a JWK), and JWTs signed with them — so the JWT tests depend on no
// key material or signer outside themselves.
#ifndef KEEL_TESTS_CMD_DAEMON_JWT_SIGNER_H_
#define KEEL_TESTS_CMD_DAEMON_JWT_SIGNER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "keel/cmd/keel/server/jwt_keys.h"

namespace keel::daemon_test {

struct SigningKey {
  server::JwtAlgorithm algorithm = server::JwtAlgorithm::kHs256;
  std::string kid;
  std::string secret;             // HS256.
  std::shared_ptr<EVP_PKEY> key;  // RS256, ES256: the key pair.
  std::string public_pem;         // RS256, ES256.
  std::string jwk;                // The public JWK (HS256: the oct key).
};

SigningKey NewHs256Key(std::string kid = "");
SigningKey NewRs256Key(std::string kid = "");
SigningKey NewEs256Key(std::string kid = "");

// {"keys":[jwk, ...]}.
std::string JwksOf(const std::vector<const SigningKey*>& keys);

// A JWT of `payload_json` signed with `key`; the header names the key's
// algorithm (or `alg` when given) and its kid when it has one.
std::string SignJwt(const SigningKey& key, const std::string& payload_json,
                    const std::string& alg = "");

// A payload: aud, exp = now + expires_in, the `keel` claim with `scopes`
// (a JSON array) and `tenant` when not empty, and `extra` members (JSON
// text, ",\"nbf\":123" say).
std::string Claims(const std::string& audience, absl::Duration expires_in,
                   const std::string& scopes_json, const std::string& tenant = "",
                   const std::string& extra = "");

// Seconds since the epoch, now plus `offset`.
int64_t UnixNow(absl::Duration offset = absl::ZeroDuration());

}  // namespace keel::daemon_test

#endif  // KEEL_TESTS_CMD_DAEMON_JWT_SIGNER_H_
