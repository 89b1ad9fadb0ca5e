#include "keel/tests/cmd/daemon/jwt_signer.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace keel::daemon_test {
namespace {

std::string Url(absl::string_view bytes) {
  std::string out;
  absl::WebSafeBase64Escape(bytes, &out);  // No padding.
  return out;
}

std::string PublicPem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PUBKEY(bio, key);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  std::string pem(data, size);
  BIO_free(bio);
  return pem;
}

std::string BnParam(EVP_PKEY* key, const char* name) {
  BIGNUM* value = nullptr;
  EVP_PKEY_get_bn_param(key, name, &value);
  std::string bytes(BN_num_bytes(value), '\0');
  BN_bn2bin(value, reinterpret_cast<unsigned char*>(bytes.data()));
  BN_free(value);
  return bytes;
}

std::string KidMember(const std::string& kid) {
  return kid.empty() ? "" : absl::StrCat(",\"kid\":\"", kid, "\"");
}

std::string Sign(const SigningKey& key, absl::string_view data) {
  if (key.algorithm == server::JwtAlgorithm::kHs256) {
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    HMAC(EVP_sha256(), key.secret.data(), static_cast<int>(key.secret.size()),
         reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &size);
    return std::string(reinterpret_cast<const char*>(mac), size);
  }
  EVP_MD_CTX* context = EVP_MD_CTX_new();
  size_t size = 0;
  EVP_DigestSignInit(context, nullptr, EVP_sha256(), nullptr, key.key.get());
  EVP_DigestSign(context, nullptr, &size, reinterpret_cast<const unsigned char*>(data.data()),
                 data.size());
  std::string signature(size, '\0');
  EVP_DigestSign(context, reinterpret_cast<unsigned char*>(signature.data()), &size,
                 reinterpret_cast<const unsigned char*>(data.data()), data.size());
  signature.resize(size);
  EVP_MD_CTX_free(context);
  if (key.algorithm != server::JwtAlgorithm::kEs256) return signature;
  // JWS wants ES256 as r || s, 32 bytes each, not DER.
  const unsigned char* der = reinterpret_cast<const unsigned char*>(signature.data());
  ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &der, static_cast<long>(signature.size()));
  std::string raw(64, '\0');
  BN_bn2binpad(ECDSA_SIG_get0_r(sig), reinterpret_cast<unsigned char*>(raw.data()), 32);
  BN_bn2binpad(ECDSA_SIG_get0_s(sig), reinterpret_cast<unsigned char*>(raw.data()) + 32, 32);
  ECDSA_SIG_free(sig);
  return raw;
}

}  // namespace

SigningKey NewHs256Key(std::string kid) {
  SigningKey key;
  key.algorithm = server::JwtAlgorithm::kHs256;
  key.kid = std::move(kid);
  // Printable, as a secret file holds it: random bytes could end in a line
  // break, which the daemon strips from the file.
  std::string random(32, '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(random.data()), 32);
  key.secret = absl::BytesToHexString(random);
  key.jwk =
      absl::StrCat("{\"kty\":\"oct\",\"k\":\"", Url(key.secret), "\"", KidMember(key.kid), "}");
  return key;
}

SigningKey NewRs256Key(std::string kid) {
  SigningKey key;
  key.algorithm = server::JwtAlgorithm::kRs256;
  key.kid = std::move(kid);
  key.key.reset(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{2048}), EVP_PKEY_free);
  key.public_pem = PublicPem(key.key.get());
  key.jwk = absl::StrCat("{\"kty\":\"RSA\",\"use\":\"sig\",\"alg\":\"RS256\",\"n\":\"",
                         Url(BnParam(key.key.get(), OSSL_PKEY_PARAM_RSA_N)), "\",\"e\":\"",
                         Url(BnParam(key.key.get(), OSSL_PKEY_PARAM_RSA_E)), "\"",
                         KidMember(key.kid), "}");
  return key;
}

SigningKey NewEs256Key(std::string kid) {
  SigningKey key;
  key.algorithm = server::JwtAlgorithm::kEs256;
  key.kid = std::move(kid);
  key.key.reset(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"), EVP_PKEY_free);
  key.public_pem = PublicPem(key.key.get());
  unsigned char point[65];
  size_t size = 0;
  EVP_PKEY_get_octet_string_param(key.key.get(), OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, point,
                                  sizeof(point), &size);
  const std::string x(reinterpret_cast<const char*>(point) + 1, 32);
  const std::string y(reinterpret_cast<const char*>(point) + 33, 32);
  key.jwk = absl::StrCat("{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"", Url(x), "\",\"y\":\"",
                         Url(y), "\"", KidMember(key.kid), "}");
  return key;
}

std::string JwksOf(const std::vector<const SigningKey*>& keys) {
  std::vector<std::string> jwks;
  for (const SigningKey* key : keys) jwks.push_back(key->jwk);
  return absl::StrCat("{\"keys\":[", absl::StrJoin(jwks, ","), "]}");
}

std::string SignJwt(const SigningKey& key, const std::string& payload_json,
                    const std::string& alg) {
  const std::string header =
      absl::StrCat("{\"alg\":\"", alg.empty() ? server::JwtAlgorithmName(key.algorithm) : alg,
                   "\",\"typ\":\"JWT\"", KidMember(key.kid), "}");
  const std::string signed_part = absl::StrCat(Url(header), ".", Url(payload_json));
  return absl::StrCat(signed_part, ".", Url(Sign(key, signed_part)));
}

std::string Claims(const std::string& audience, absl::Duration expires_in,
                   const std::string& scopes_json, const std::string& tenant,
                   const std::string& extra) {
  return absl::StrCat("{\"aud\":\"", audience, "\",\"exp\":", UnixNow(expires_in),
                      ",\"keel\":{\"scopes\":", scopes_json,
                      tenant.empty() ? "" : absl::StrCat(",\"tenant\":\"", tenant, "\""), "}",
                      extra, "}");
}

int64_t UnixNow(absl::Duration offset) { return absl::ToUnixSeconds(absl::Now() + offset); }

}  // namespace keel::daemon_test
