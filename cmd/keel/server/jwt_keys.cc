#include "keel/cmd/keel/server/jwt_keys.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>

#include <boost/json.hpp>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::server {
namespace {

namespace json = boost::json;

absl::StatusOr<std::string> ReadText(const std::string& path, absl::string_view what) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot read ", what, " '", path, "'"));
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::shared_ptr<EVP_PKEY> Shared(EVP_PKEY* key) { return {key, EVP_PKEY_free}; }

// The algorithm a public key verifies: RSA of at least kMinRsaBits for
// RS256, EC on P-256 for ES256.
absl::StatusOr<JwtAlgorithm> AlgorithmOf(EVP_PKEY* key) {
  if (EVP_PKEY_is_a(key, "RSA")) {
    if (EVP_PKEY_get_bits(key) < kMinRsaBits) {
      return InvalidArgument(absl::StrCat("an RSA key of ", EVP_PKEY_get_bits(key),
                                          " bits: RS256 wants at least ", kMinRsaBits));
    }
    return JwtAlgorithm::kRs256;
  }
  if (EVP_PKEY_is_a(key, "EC")) {
    char group[64] = {};
    size_t length = 0;
    if (EVP_PKEY_get_group_name(key, group, sizeof(group), &length) == 1 &&
        (absl::string_view(group, length) == "prime256v1" ||
         absl::string_view(group, length) == "P-256")) {
      return JwtAlgorithm::kEs256;
    }
    return InvalidArgument("an EC key not on P-256: ES256 wants P-256");
  }
  return InvalidArgument("not an RSA or EC public key");
}

// A JWK member holding base64url bytes.
absl::StatusOr<std::string> Bytes(const json::object& jwk, absl::string_view name) {
  const json::value* value = jwk.if_contains(json::string_view(name.data(), name.size()));
  std::string bytes;
  if (value == nullptr || !value->is_string() ||
      !absl::WebSafeBase64Unescape(std::string(value->get_string()), &bytes) || bytes.empty()) {
    return InvalidArgument(absl::StrCat("member '", name, "' is not base64url bytes"));
  }
  return bytes;
}

std::string StringMember(const json::object& jwk, absl::string_view name) {
  const json::value* value = jwk.if_contains(json::string_view(name.data(), name.size()));
  return value != nullptr && value->is_string() ? std::string(value->get_string()) : "";
}

// A key built from OpenSSL parameters (EVP_PKEY_fromdata).
absl::StatusOr<std::shared_ptr<EVP_PKEY>> KeyFromParams(const char* type, OSSL_PARAM_BLD* build) {
  OSSL_PARAM* params = OSSL_PARAM_BLD_to_param(build);
  EVP_PKEY_CTX* context = EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr);
  EVP_PKEY* key = nullptr;
  const bool made = params != nullptr && context != nullptr &&
                    EVP_PKEY_fromdata_init(context) == 1 &&
                    EVP_PKEY_fromdata(context, &key, EVP_PKEY_PUBLIC_KEY, params) == 1;
  EVP_PKEY_CTX_free(context);
  OSSL_PARAM_free(params);
  if (!made) return InvalidArgument(absl::StrCat("not a valid ", type, " public key"));
  return Shared(key);
}

absl::StatusOr<std::shared_ptr<EVP_PKEY>> RsaKey(const json::object& jwk) {
  KEEL_ASSIGN_OR_RETURN(std::string n, Bytes(jwk, "n"));
  KEEL_ASSIGN_OR_RETURN(std::string e, Bytes(jwk, "e"));
  BIGNUM* modulus = BN_bin2bn(reinterpret_cast<const unsigned char*>(n.data()), n.size(), nullptr);
  BIGNUM* exponent = BN_bin2bn(reinterpret_cast<const unsigned char*>(e.data()), e.size(), nullptr);
  OSSL_PARAM_BLD* build = OSSL_PARAM_BLD_new();
  absl::StatusOr<std::shared_ptr<EVP_PKEY>> key = InvalidArgument("not a valid RSA public key");
  if (modulus != nullptr && exponent != nullptr && build != nullptr &&
      OSSL_PARAM_BLD_push_BN(build, OSSL_PKEY_PARAM_RSA_N, modulus) == 1 &&
      OSSL_PARAM_BLD_push_BN(build, OSSL_PKEY_PARAM_RSA_E, exponent) == 1) {
    key = KeyFromParams("RSA", build);
  }
  OSSL_PARAM_BLD_free(build);
  BN_free(modulus);
  BN_free(exponent);
  return key;
}

absl::StatusOr<std::shared_ptr<EVP_PKEY>> EcKey(const json::object& jwk) {
  if (StringMember(jwk, "crv") != "P-256") return InvalidArgument("crv is not P-256");
  KEEL_ASSIGN_OR_RETURN(std::string x, Bytes(jwk, "x"));
  KEEL_ASSIGN_OR_RETURN(std::string y, Bytes(jwk, "y"));
  if (x.size() != 32 || y.size() != 32) return InvalidArgument("x and y are not 32 bytes each");
  const std::string point = absl::StrCat("\x04", x, y);  // Uncompressed (SEC 1).
  OSSL_PARAM_BLD* build = OSSL_PARAM_BLD_new();
  absl::StatusOr<std::shared_ptr<EVP_PKEY>> key = InvalidArgument("not a valid EC public key");
  if (build != nullptr &&
      OSSL_PARAM_BLD_push_utf8_string(build, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) == 1 &&
      OSSL_PARAM_BLD_push_octet_string(build, OSSL_PKEY_PARAM_PUB_KEY, point.data(),
                                       point.size()) == 1) {
    key = KeyFromParams("EC", build);
  }
  OSSL_PARAM_BLD_free(build);
  return key;
}

// One JWK; nullopt for a key that is not for signatures.
absl::StatusOr<std::optional<JwtKey>> ParseJwk(const json::object& jwk) {
  const std::string use = StringMember(jwk, "use");
  if (!use.empty() && use != "sig") return std::nullopt;
  JwtKey key;
  key.kid = StringMember(jwk, "kid");
  const std::string kty = StringMember(jwk, "kty");
  if (kty == "oct") {
    key.algorithm = JwtAlgorithm::kHs256;
    KEEL_ASSIGN_OR_RETURN(key.secret, Bytes(jwk, "k"));
    if (key.secret.size() < kMinHs256SecretBytes) {
      return InvalidArgument(
          absl::StrCat("an oct key shorter than ", kMinHs256SecretBytes, " bytes"));
    }
  } else if (kty == "RSA" || kty == "EC") {
    KEEL_ASSIGN_OR_RETURN(key.key, kty == "RSA" ? RsaKey(jwk) : EcKey(jwk));
    KEEL_ASSIGN_OR_RETURN(key.algorithm, AlgorithmOf(key.key.get()));
  } else {
    return InvalidArgument(absl::StrCat("kty '", kty, "' is not RSA, EC or oct"));
  }
  const std::string alg = StringMember(jwk, "alg");
  if (!alg.empty() && alg != JwtAlgorithmName(key.algorithm)) {
    return InvalidArgument(absl::StrCat("alg '", alg, "' does not fit a key of kty ", kty));
  }
  return key;
}

}  // namespace

absl::string_view JwtAlgorithmName(JwtAlgorithm algorithm) {
  switch (algorithm) {
    case JwtAlgorithm::kHs256:
      return "HS256";
    case JwtAlgorithm::kRs256:
      return "RS256";
    case JwtAlgorithm::kEs256:
      return "ES256";
  }
  return "?";
}

absl::StatusOr<JwtKey> LoadHs256Secret(const std::string& path) {
  KEEL_ASSIGN_OR_RETURN(std::string secret, ReadText(path, "HS256 secret file"));
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
  if (secret.size() < kMinHs256SecretBytes) {
    return InvalidArgument(absl::StrCat("HS256 secret file '", path, "': the secret is ",
                                        secret.size(), " bytes; HS256 wants at least ",
                                        kMinHs256SecretBytes));
  }
  JwtKey key;
  key.algorithm = JwtAlgorithm::kHs256;
  key.secret = std::move(secret);
  return key;
}

absl::StatusOr<JwtKey> ParsePemPublicKey(absl::string_view pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* raw = bio == nullptr ? nullptr : PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (raw == nullptr) return InvalidArgument("no PEM public key ('-----BEGIN PUBLIC KEY-----')");
  JwtKey key;
  key.key = Shared(raw);
  KEEL_ASSIGN_OR_RETURN(key.algorithm, AlgorithmOf(raw));
  return key;
}

absl::StatusOr<JwtKey> LoadPemPublicKey(const std::string& path) {
  KEEL_ASSIGN_OR_RETURN(std::string pem, ReadText(path, "JWT public key file"));
  absl::StatusOr<JwtKey> key = ParsePemPublicKey(pem);
  if (!key.ok()) {
    return InvalidArgument(
        absl::StrCat("JWT public key file '", path, "': ", key.status().message()));
  }
  return key;
}

absl::StatusOr<std::vector<JwtKey>> ParseJwks(absl::string_view text) {
  boost::system::error_code error;
  json::value document = json::parse(json::string_view(text.data(), text.size()), error);
  const json::object* object = error ? nullptr : document.if_object();
  const json::value* keys = object == nullptr ? nullptr : object->if_contains("keys");
  if (keys == nullptr || !keys->is_array()) {
    return InvalidArgument("not a JWKS document (an object with a 'keys' array)");
  }
  std::vector<JwtKey> parsed;
  size_t index = 0;
  for (const json::value& jwk : keys->get_array()) {
    absl::StatusOr<std::optional<JwtKey>> key =
        jwk.is_object() ? ParseJwk(jwk.get_object()) : InvalidArgument("not an object");
    if (!key.ok()) {
      return InvalidArgument(absl::StrCat("key ", index, ": ", key.status().message()));
    }
    if (*key) parsed.push_back(**std::move(key));
    ++index;
  }
  if (parsed.empty()) return InvalidArgument("the JWKS holds no signing key");
  return parsed;
}

absl::StatusOr<std::vector<JwtKey>> LoadJwks(const std::string& path) {
  KEEL_ASSIGN_OR_RETURN(std::string text, ReadText(path, "JWKS file"));
  absl::StatusOr<std::vector<JwtKey>> keys = ParseJwks(text);
  if (!keys.ok()) {
    return InvalidArgument(absl::StrCat("JWKS file '", path, "': ", keys.status().message()));
  }
  return keys;
}

}  // namespace keel::server
