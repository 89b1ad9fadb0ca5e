// JwtVerifier and its keys without sockets: each algorithm with keys the
// test makes (OpenSSL), the claims checked (exp, nbf, aud, iss, the `keel`
// claim), and the tokens refused (rfcs/0004 §13). Over HTTP:
// scoped_access_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/jwt_verifier.h"
#include "keel/tests/cmd/daemon/jwt_signer.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

using server::JwtKey;
using server::JwtOptions;
using server::JwtVerifier;
using ::testing::HasSubstr;

constexpr char kAudience[] = "keel-test";

// A verifier of `keys` (their public halves, as the daemon loads them).
JwtVerifier VerifierOf(const std::vector<const SigningKey*>& keys,
                       absl::Duration leeway = absl::ZeroDuration(), std::string issuer = "") {
  absl::StatusOr<std::vector<JwtKey>> loaded = server::ParseJwks(JwksOf(keys));
  EXPECT_OK(loaded);
  JwtOptions options;
  options.audience = kAudience;
  options.issuer = std::move(issuer);
  options.leeway = leeway;
  return JwtVerifier(options, loaded.ok() ? *loaded : std::vector<JwtKey>());
}

std::string Valid(const SigningKey& key, const std::string& scopes = "[\"read:orders.\"]",
                  const std::string& tenant = "") {
  return SignJwt(key, Claims(kAudience, absl::Minutes(5), scopes, tenant));
}

// The reason a token is refused ("" when it is accepted).
std::string Refusal(const JwtVerifier& verifier, const std::string& token,
                    absl::Time now = absl::Now()) {
  absl::StatusOr<server::Grant> grant = verifier.Verify(token, now);
  if (grant.ok()) return "";
  EXPECT_EQ(grant.status().code(), absl::StatusCode::kUnauthenticated);
  return std::string(grant.status().message());
}

class JwtTest : public ::testing::Test {
 protected:
  SigningKey hs_ = NewHs256Key();
  SigningKey rs_ = NewRs256Key();
  SigningKey es_ = NewEs256Key();
};

TEST_F(JwtTest, EachAlgorithmVerifiesWithItsKeyAndGivesTheClaimsGrant) {
  for (const SigningKey* key : {&hs_, &rs_, &es_}) {
    SCOPED_TRACE(server::JwtAlgorithmName(key->algorithm));
    const JwtVerifier verifier = VerifierOf({key});
    ASSERT_OK_AND_ASSIGN(
        server::Grant grant,
        verifier.Verify(Valid(*key, "[\"read:orders.\",\"publish:orders.\"]", "acme"),
                        absl::Now()));
    EXPECT_EQ(grant.ToString(), "publish:orders. read:orders. tenant=acme");
  }
  // The scopes may also be one space-separated string, as OAuth's `scope`.
  const JwtVerifier verifier = VerifierOf({&hs_});
  ASSERT_OK_AND_ASSIGN(server::Grant grant,
                       verifier.Verify(Valid(hs_, "\"read publish:x.\""), absl::Now()));
  EXPECT_EQ(grant.ToString(), "publish:x. read");
}

TEST_F(JwtTest, PemPublicKeysVerifyRs256AndEs256) {
  for (const SigningKey* key : {&rs_, &es_}) {
    SCOPED_TRACE(server::JwtAlgorithmName(key->algorithm));
    ASSERT_OK_AND_ASSIGN(JwtKey loaded, server::ParsePemPublicKey(key->public_pem));
    EXPECT_EQ(loaded.algorithm, key->algorithm);
    JwtOptions options;
    options.audience = kAudience;
    const JwtVerifier verifier(options, {loaded});
    EXPECT_EQ(Refusal(verifier, Valid(*key)), "");
  }
}

TEST_F(JwtTest, ABadSignatureOrAnotherKeysIsRefused) {
  const JwtVerifier verifier = VerifierOf({&hs_, &rs_, &es_});
  for (const SigningKey* key : {&hs_, &rs_, &es_}) {
    SCOPED_TRACE(server::JwtAlgorithmName(key->algorithm));
    std::string token = Valid(*key);
    EXPECT_EQ(Refusal(verifier, token), "");
    // A payload changed after signing: the signature no longer matches.
    const size_t first = token.find('.');
    const size_t second = token.find('.', first + 1);
    std::string payload;
    ASSERT_TRUE(absl::WebSafeBase64Unescape(token.substr(first + 1, second - first - 1), &payload));
    payload.replace(payload.find("read:orders."), 12, "read:billing");
    std::string forged_payload;
    absl::WebSafeBase64Escape(payload, &forged_payload);
    const std::string forged =
        absl::StrCat(token.substr(0, first + 1), forged_payload, token.substr(second));
    EXPECT_THAT(Refusal(verifier, forged), HasSubstr("verifies its signature"));
    // A signature character changed (not the last: its low bits may be
    // padding).
    char& c = token[token.size() - 5];
    c = c == 'A' ? 'B' : 'A';
    EXPECT_THAT(Refusal(verifier, token), HasSubstr("verifies its signature"));
  }
  // Signed by a key the daemon does not know.
  const SigningKey stranger = NewEs256Key();
  EXPECT_THAT(Refusal(verifier, Valid(stranger)), HasSubstr("no configured ES256 key"));
}

TEST_F(JwtTest, ATokenCannotChooseHowItIsChecked) {
  const JwtVerifier verifier = VerifierOf({&rs_});
  // alg none: no key verifies nothing.
  EXPECT_THAT(
      Refusal(verifier, SignJwt(hs_, Claims(kAudience, absl::Minutes(5), "[\"read\"]"), "none")),
      HasSubstr("alg 'none'"));
  // HS256 "signed" with the RSA public key as the secret: a public key is
  // never taken as an HMAC secret.
  SigningKey confused = hs_;
  confused.secret = rs_.public_pem;
  EXPECT_THAT(Refusal(verifier, Valid(confused)), HasSubstr("no configured HS256 key"));
}

TEST_F(JwtTest, ExpiryAndNotBeforeAreCheckedWithTheLeeway) {
  const absl::Time now = absl::Now();
  const JwtVerifier strict = VerifierOf({&hs_});
  const JwtVerifier lenient = VerifierOf({&hs_}, absl::Minutes(2));
  const std::string expired = SignJwt(hs_, Claims(kAudience, -absl::Minutes(1), "[\"read\"]"));
  EXPECT_THAT(Refusal(strict, expired, now), HasSubstr("expired"));
  EXPECT_EQ(Refusal(lenient, expired, now), "");  // A minute late, two forgiven.
  const std::string long_expired = SignJwt(hs_, Claims(kAudience, -absl::Minutes(3), "[\"read\"]"));
  EXPECT_THAT(Refusal(lenient, long_expired, now), HasSubstr("expired"));

  const std::string early =
      SignJwt(hs_, Claims(kAudience, absl::Minutes(10), "[\"read\"]", "",
                          absl::StrCat(",\"nbf\":", UnixNow(absl::Minutes(1)))));
  EXPECT_THAT(Refusal(strict, early, now), HasSubstr("not valid yet"));
  EXPECT_EQ(Refusal(lenient, early, now), "");
  EXPECT_EQ(Refusal(strict, early, now + absl::Minutes(2)), "");  // Its time has come.

  const std::string no_expiry =
      SignJwt(hs_, absl::StrCat("{\"aud\":\"", kAudience, "\",\"keel\":{\"scopes\":[\"read\"]}}"));
  EXPECT_THAT(Refusal(strict, no_expiry, now), HasSubstr("no 'exp'"));
}

TEST_F(JwtTest, TheAudienceMustNameThisDaemonAndTheIssuerMatchWhenSet) {
  const JwtVerifier verifier = VerifierOf({&hs_});
  EXPECT_THAT(
      Refusal(verifier, SignJwt(hs_, Claims("another-service", absl::Minutes(5), "[\"read\"]"))),
      HasSubstr("'aud'"));
  // An array of audiences that holds it.
  EXPECT_EQ(Refusal(verifier, SignJwt(hs_, absl::StrCat("{\"aud\":[\"x\",\"", kAudience,
                                                        "\"],\"exp\":", UnixNow(absl::Minutes(5)),
                                                        ",\"keel\":{\"scopes\":[\"read\"]}}"))),
            "");
  const JwtVerifier with_issuer = VerifierOf({&hs_}, absl::ZeroDuration(), "https://idp.example");
  EXPECT_THAT(Refusal(with_issuer, Valid(hs_)), HasSubstr("'iss'"));
  EXPECT_EQ(Refusal(with_issuer, SignJwt(hs_, Claims(kAudience, absl::Minutes(5), "[\"read\"]", "",
                                                     ",\"iss\":\"https://idp.example\""))),
            "");
}

TEST_F(JwtTest, TheKeelClaimMustBeAValidGrant) {
  const JwtVerifier verifier = VerifierOf({&hs_});
  EXPECT_THAT(Refusal(verifier, SignJwt(hs_, absl::StrCat("{\"aud\":\"", kAudience, "\",\"exp\":",
                                                          UnixNow(absl::Minutes(5)), "}"))),
              HasSubstr("no 'keel' claim"));
  EXPECT_THAT(Refusal(verifier, Valid(hs_, "[\"write\"]")), HasSubstr("'write' is not a scope"));
  EXPECT_THAT(Refusal(verifier, Valid(hs_, "[\"admin\"]", "acme")), HasSubstr("admin acts"));
  EXPECT_THAT(Refusal(verifier, Valid(hs_, "[1]")), HasSubstr("not a string"));
}

TEST_F(JwtTest, WhatIsNotAJwtIsRefusedForWhatItIs) {
  const JwtVerifier verifier = VerifierOf({&hs_});
  EXPECT_THAT(Refusal(verifier, "a.b"), HasSubstr("three dot-separated parts"));
  EXPECT_THAT(Refusal(verifier, "!!.e30.sig"), HasSubstr("header is not base64url"));
  EXPECT_THAT(Refusal(verifier, "e30.e30.sig"), HasSubstr("alg ''"));
  EXPECT_THAT(Refusal(verifier, std::string(server::kMaxJwtBytes + 1, 'a')), HasSubstr("longer"));
  EXPECT_TRUE(JwtVerifier::LooksLikeJwt("a.b.c"));
  EXPECT_FALSE(JwtVerifier::LooksLikeJwt("static-token-0123456789"));
  EXPECT_FALSE(JwtVerifier::LooksLikeJwt("a.b.c.d"));
}

TEST_F(JwtTest, AJwksKeyIsChosenByKid) {
  const SigningKey first = NewEs256Key("k1");
  const SigningKey second = NewEs256Key("k2");
  const JwtVerifier verifier = VerifierOf({&first, &second});
  EXPECT_EQ(Refusal(verifier, Valid(first)), "");
  EXPECT_EQ(Refusal(verifier, Valid(second)), "");
  SigningKey mislabelled = second;
  mislabelled.kid = "k1";  // Signed by k2, claims to be k1.
  EXPECT_THAT(Refusal(verifier, Valid(mislabelled)), HasSubstr("verifies its signature"));
}

TEST(JwtKeysTest, RefusesKeysThatAreWeakOrNotForSignatures) {
  EXPECT_THAT(std::string(server::ParseJwks("{}").status().message()), HasSubstr("JWKS"));
  EXPECT_THAT(
      std::string(
          server::ParseJwks("{\"keys\":[{\"kty\":\"oct\",\"k\":\"c2hvcnQ\"}]}").status().message()),
      HasSubstr("shorter than 32 bytes"));
  EXPECT_THAT(std::string(server::ParseJwks("{\"keys\":[{\"kty\":\"OKP\"}]}").status().message()),
              HasSubstr("kty 'OKP'"));
  // An encryption key is skipped; with nothing else, there is no key.
  EXPECT_THAT(
      std::string(
          server::ParseJwks("{\"keys\":[{\"kty\":\"RSA\",\"use\":\"enc\"}]}").status().message()),
      HasSubstr("no signing key"));
  const SigningKey es = NewEs256Key();
  std::string wrong_alg = es.jwk;
  wrong_alg.insert(1, "\"alg\":\"RS256\",");
  EXPECT_THAT(
      std::string(
          server::ParseJwks(absl::StrCat("{\"keys\":[", wrong_alg, "]}")).status().message()),
      HasSubstr("does not fit"));
  std::unique_ptr<EVP_PKEY, void (*)(EVP_PKEY*)> small(
      EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{1024}), EVP_PKEY_free);
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PUBKEY(bio, small.get());
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  const std::string pem(data, size);
  BIO_free(bio);
  EXPECT_THAT(std::string(server::ParsePemPublicKey(pem).status().message()),
              HasSubstr("1024 bits"));
}

}  // namespace
}  // namespace keel::daemon_test
