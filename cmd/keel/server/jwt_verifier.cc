#include "keel/cmd/keel/server/jwt_verifier.h"

#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <boost/json.hpp>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::server {
namespace {

namespace json = boost::json;

constexpr size_t kEs256SignatureBytes = 64;  // r and s, 32 bytes each (RFC 7518 §3.4).

absl::Status Refused(absl::string_view why) {
  return absl::UnauthenticatedError(absl::StrCat("the token is not valid: ", why));
}

// A base64url part (no padding) decoded as a JSON object.
absl::StatusOr<json::object> JsonPart(absl::string_view part, absl::string_view what) {
  std::string text;
  if (!absl::WebSafeBase64Unescape(part, &text)) {
    return Refused(absl::StrCat("its ", what, " is not base64url"));
  }
  boost::system::error_code error;
  json::value value = json::parse(json::string_view(text.data(), text.size()), error);
  if (error || !value.is_object())
    return Refused(absl::StrCat("its ", what, " is not a JSON object"));
  return std::move(value.get_object());
}

std::optional<JwtAlgorithm> AlgorithmNamed(absl::string_view name) {
  for (JwtAlgorithm algorithm :
       {JwtAlgorithm::kHs256, JwtAlgorithm::kRs256, JwtAlgorithm::kEs256}) {
    if (JwtAlgorithmName(algorithm) == name) return algorithm;
  }
  return std::nullopt;
}

std::string StringOf(const json::object& object, absl::string_view name) {
  const json::value* value = object.if_contains(json::string_view(name.data(), name.size()));
  return value != nullptr && value->is_string() ? std::string(value->get_string()) : "";
}

// A NumericDate claim (seconds since the epoch, maybe fractional).
absl::StatusOr<std::optional<double>> DateOf(const json::object& claims, absl::string_view name) {
  const json::value* value = claims.if_contains(json::string_view(name.data(), name.size()));
  if (value == nullptr) return std::nullopt;
  if (!value->is_number()) return Refused(absl::StrCat("'", name, "' is not a number"));
  return value->to_number<double>();
}

// The DER form OpenSSL verifies of a JWS ES256 signature (r || s).
std::string DerOfEs256(absl::string_view signature) {
  ECDSA_SIG* sig = ECDSA_SIG_new();
  const auto* bytes = reinterpret_cast<const unsigned char*>(signature.data());
  BIGNUM* r = BN_bin2bn(bytes, 32, nullptr);
  BIGNUM* s = BN_bin2bn(bytes + 32, 32, nullptr);
  std::string der;
  if (sig != nullptr && r != nullptr && s != nullptr && ECDSA_SIG_set0(sig, r, s) == 1) {
    r = s = nullptr;  // Owned by sig now.
    unsigned char* out = nullptr;
    const int size = i2d_ECDSA_SIG(sig, &out);
    if (size > 0) der.assign(reinterpret_cast<const char*>(out), size);
    OPENSSL_free(out);
  }
  BN_free(r);
  BN_free(s);
  ECDSA_SIG_free(sig);
  return der;
}

bool HmacVerifies(const std::string& secret, absl::string_view signed_part,
                  absl::string_view signature) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
           reinterpret_cast<const unsigned char*>(signed_part.data()), signed_part.size(), mac,
           &size) == nullptr) {
    return false;
  }
  return signature.size() == size && CRYPTO_memcmp(mac, signature.data(), size) == 0;
}

bool PublicKeyVerifies(EVP_PKEY* key, absl::string_view signed_part, absl::string_view signature) {
  EVP_MD_CTX* context = EVP_MD_CTX_new();
  const bool verified =
      context != nullptr &&
      EVP_DigestVerifyInit(context, nullptr, EVP_sha256(), nullptr, key) == 1 &&
      EVP_DigestVerify(context, reinterpret_cast<const unsigned char*>(signature.data()),
                       signature.size(), reinterpret_cast<const unsigned char*>(signed_part.data()),
                       signed_part.size()) == 1;
  EVP_MD_CTX_free(context);
  return verified;
}

// The grant of the `keel` claim: {"scopes": [words] or "words", "tenant"}.
absl::StatusOr<Grant> GrantOf(const json::object& claims) {
  const json::value* claim = claims.if_contains("keel");
  if (claim == nullptr || !claim->is_object()) return Refused("it has no 'keel' claim object");
  const json::object& keel = claim->get_object();
  std::vector<std::string> words;
  const json::value* scopes = keel.if_contains("scopes");
  if (scopes != nullptr && scopes->is_string()) {
    words = absl::StrSplit(std::string(scopes->get_string()), ' ', absl::SkipEmpty());
  } else if (scopes != nullptr && scopes->is_array()) {
    for (const json::value& scope : scopes->get_array()) {
      if (!scope.is_string()) return Refused("'keel.scopes' holds a value that is not a string");
      words.emplace_back(scope.get_string());
    }
  } else {
    return Refused("'keel.scopes' is not an array of scopes or a string of them");
  }
  if (const json::value* tenant = keel.if_contains("tenant"); tenant != nullptr) {
    if (!tenant->is_string()) return Refused("'keel.tenant' is not a string");
    words.push_back(absl::StrCat("tenant=", std::string(tenant->get_string())));
  }
  absl::StatusOr<Grant> grant = Grant::Parse(absl::MakeConstSpan(words));
  if (!grant.ok()) return Refused(absl::StrCat("its 'keel' claim: ", grant.status().message()));
  return grant;
}

}  // namespace

absl::StatusOr<std::unique_ptr<JwtVerifier>> JwtVerifier::Load(const JwtOptions& options) {
  if (!options.configured()) return InvalidArgument("JWT: no key configured");
  if (options.audience.empty()) {
    return InvalidArgument(
        "JWT: --jwt-audience is required (a token must say it is meant for this daemon)");
  }
  if (options.leeway < absl::ZeroDuration()) return InvalidArgument("JWT: negative leeway");
  std::vector<JwtKey> keys;
  if (!options.hs256_secret_file.empty()) {
    KEEL_ASSIGN_OR_RETURN(JwtKey key, LoadHs256Secret(options.hs256_secret_file));
    keys.push_back(std::move(key));
  }
  if (!options.public_key_file.empty()) {
    KEEL_ASSIGN_OR_RETURN(JwtKey key, LoadPemPublicKey(options.public_key_file));
    keys.push_back(std::move(key));
  }
  if (!options.jwks_file.empty()) {
    KEEL_ASSIGN_OR_RETURN(std::vector<JwtKey> jwks, LoadJwks(options.jwks_file));
    for (JwtKey& key : jwks) keys.push_back(std::move(key));
  }
  return std::make_unique<JwtVerifier>(options, std::move(keys));
}

bool JwtVerifier::LooksLikeJwt(absl::string_view token) {
  const size_t first = token.find('.');
  if (first == absl::string_view::npos) return false;
  const size_t second = token.find('.', first + 1);
  return second != absl::string_view::npos &&
         token.find('.', second + 1) == absl::string_view::npos;
}

bool JwtVerifier::SignatureVerifies(JwtAlgorithm algorithm, absl::string_view kid,
                                    absl::string_view signed_part,
                                    absl::string_view signature) const {
  std::string der;
  if (algorithm == JwtAlgorithm::kEs256) {
    if (signature.size() != kEs256SignatureBytes) return false;
    der = DerOfEs256(signature);
  }
  for (const JwtKey& key : keys_) {
    if (key.algorithm != algorithm || (!kid.empty() && !key.kid.empty() && key.kid != kid)) {
      continue;
    }
    const bool verified = algorithm == JwtAlgorithm::kHs256
                              ? HmacVerifies(key.secret, signed_part, signature)
                          : algorithm == JwtAlgorithm::kEs256
                              ? PublicKeyVerifies(key.key.get(), signed_part, der)
                              : PublicKeyVerifies(key.key.get(), signed_part, signature);
    if (verified) return true;
  }
  return false;
}

absl::StatusOr<Grant> JwtVerifier::Verify(absl::string_view token, absl::Time now) const {
  if (token.size() > kMaxJwtBytes) return Refused("it is longer than a JWT may be here");
  std::vector<absl::string_view> parts = absl::StrSplit(token, '.');
  if (parts.size() != 3) return Refused("a JWT is three dot-separated parts");
  KEEL_ASSIGN_OR_RETURN(json::object header, JsonPart(parts[0], "header"));
  const std::string alg = StringOf(header, "alg");
  const std::optional<JwtAlgorithm> algorithm = AlgorithmNamed(alg);
  if (!algorithm) return Refused(absl::StrCat("alg '", alg, "' is not HS256, RS256 or ES256"));
  std::string signature;
  if (!absl::WebSafeBase64Unescape(parts[2], &signature)) {
    return Refused("its signature is not base64url");
  }
  const absl::string_view signed_part = token.substr(0, parts[0].size() + 1 + parts[1].size());
  if (!SignatureVerifies(*algorithm, StringOf(header, "kid"), signed_part, signature)) {
    return Refused(absl::StrCat("no configured ", alg, " key verifies its signature"));
  }
  KEEL_ASSIGN_OR_RETURN(json::object claims, JsonPart(parts[1], "payload"));
  const double seconds = absl::ToDoubleSeconds(now - absl::UnixEpoch());
  const double leeway = absl::ToDoubleSeconds(options_.leeway);
  KEEL_ASSIGN_OR_RETURN(std::optional<double> expires, DateOf(claims, "exp"));
  if (!expires) return Refused("it has no 'exp' (expiry) claim");
  if (seconds >= *expires + leeway) return Refused("it has expired ('exp')");
  KEEL_ASSIGN_OR_RETURN(std::optional<double> not_before, DateOf(claims, "nbf"));
  if (not_before && seconds + leeway < *not_before) {
    return Refused("it is not valid yet ('nbf')");
  }
  bool audience_found = false;
  if (const json::value* audience = claims.if_contains("aud"); audience != nullptr) {
    if (audience->is_string()) audience_found = audience->get_string() == options_.audience;
    if (audience->is_array()) {
      for (const json::value& each : audience->get_array()) {
        audience_found =
            audience_found || (each.is_string() && each.get_string() == options_.audience);
      }
    }
  }
  if (!audience_found) {
    return Refused(
        absl::StrCat("its 'aud' does not name this daemon's audience '", options_.audience, "'"));
  }
  if (!options_.issuer.empty() && StringOf(claims, "iss") != options_.issuer) {
    return Refused(absl::StrCat("its 'iss' is not '", options_.issuer, "'"));
  }
  return GrantOf(claims);
}

}  // namespace keel::server
