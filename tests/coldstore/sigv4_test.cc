// The SigV4 signer against AWS's published test suite
// (aws-sig-v4-test-suite: get-vanilla, post-vanilla and others, signed
// with its example credentials at 20150830T123600Z) and the worked
// examples of AWS's documentation (IAM ListUsers; S3 GetObject with a
// Range). An S3-compatible test server does not check signatures, so
// these vectors are what proves the signer right.
#include "keel/coldstore/s3/sigv4.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"

namespace keel::sigv4 {
namespace {

constexpr char kEmptyHash[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const Credentials kSuiteCredentials{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""};
const Scope kSuiteScope{"us-east-1", "service"};
constexpr char kSuiteDate[] = "20150830T123600Z";

Request SuiteRequest(std::string method, std::string path, Pairs query = {},
                     Pairs extra_headers = {}, absl::string_view body = "") {
  Request request{std::move(method), std::move(path), std::move(query), std::move(extra_headers),
                  Sha256Hex(body)};
  request.headers.emplace_back("Host", "example.amazonaws.com");
  request.headers.emplace_back("X-Amz-Date", kSuiteDate);
  return request;
}

std::string SuiteAuthorization(absl::string_view signed_headers, absl::string_view signature) {
  return absl::StrCat(
      "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
      "SignedHeaders=",
      signed_headers, ", Signature=", signature);
}

TEST(SigV4Test, GetVanilla) {
  const Request request = SuiteRequest("GET", "/");
  EXPECT_EQ(CanonicalRequest(request),
            absl::StrCat("GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
                         "host;x-amz-date\n",
                         kEmptyHash));
  EXPECT_EQ(StringToSign(kSuiteDate, kSuiteScope, CanonicalRequest(request)),
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
            "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63");
  EXPECT_EQ(Authorization(kSuiteCredentials, kSuiteScope, kSuiteDate, request),
            SuiteAuthorization("host;x-amz-date",
                               "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"));
}

TEST(SigV4Test, PostVanilla) {
  EXPECT_EQ(Authorization(kSuiteCredentials, kSuiteScope, kSuiteDate, SuiteRequest("POST", "/")),
            SuiteAuthorization("host;x-amz-date",
                               "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"));
}

TEST(SigV4Test, GetVanillaQueryOrderKeyCaseSortsTheQuery) {
  const Request request = SuiteRequest("GET", "/", {{"Param2", "value2"}, {"Param1", "value1"}});
  EXPECT_EQ(Sha256Hex(CanonicalRequest(request)),
            "816cd5b414d056048ba4f7c5386d6e0533120fb1fcfa93762cf0fc39e2cf19e0");
  EXPECT_EQ(Authorization(kSuiteCredentials, kSuiteScope, kSuiteDate, request),
            SuiteAuthorization("host;x-amz-date",
                               "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"));
  EXPECT_EQ(EncodedTarget(request), "/?Param1=value1&Param2=value2");
}

TEST(SigV4Test, PostXWwwFormUrlencodedSignsTheBodyAndContentType) {
  const Request request = SuiteRequest(
      "POST", "/", {}, {{"Content-Type", "application/x-www-form-urlencoded"}}, "Param1=value1");
  EXPECT_EQ(Authorization(kSuiteCredentials, kSuiteScope, kSuiteDate, request),
            SuiteAuthorization("content-type;host;x-amz-date",
                               "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"));
}

TEST(SigV4Test, GetUtf8EncodesThePathAsSent) {
  const Request request = SuiteRequest("GET", "/\xE1\x88\xB4");
  EXPECT_EQ(EncodedTarget(request), "/%E1%88%B4");
  EXPECT_EQ(Authorization(kSuiteCredentials, kSuiteScope, kSuiteDate, request),
            SuiteAuthorization("host;x-amz-date",
                               "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85"));
}

// "Examples of the complete Signature Version 4 signing process": IAM
// ListUsers.
TEST(SigV4Test, DocumentedIamExample) {
  const Scope scope{"us-east-1", "iam"};
  Request request{"GET",
                  "/",
                  {{"Action", "ListUsers"}, {"Version", "2010-05-08"}},
                  {{"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"},
                   {"Host", "iam.amazonaws.com"},
                   {"X-Amz-Date", kSuiteDate}},
                  kEmptyHash};
  EXPECT_EQ(Sha256Hex(CanonicalRequest(request)),
            "f536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59");
  EXPECT_EQ(Hex(SigningKey(kSuiteCredentials.secret_access_key, kSuiteDate, scope)),
            "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9");
  EXPECT_EQ(Authorization(kSuiteCredentials, scope, kSuiteDate, request),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, "
            "SignedHeaders=content-type;host;x-amz-date, "
            "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7");
}

// The S3 documentation's GetObject example (the first 10 bytes of
// test.txt), with x-amz-content-sha256 as S3 requires.
TEST(SigV4Test, DocumentedS3GetObjectExample) {
  const Credentials credentials{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                                ""};
  const Scope scope{"us-east-1", "s3"};
  Request request{"GET",
                  "/test.txt",
                  {},
                  {{"Host", "examplebucket.s3.amazonaws.com"},
                   {"Range", "bytes=0-9"},
                   {"x-amz-content-sha256", kEmptyHash},
                   {"x-amz-date", "20130524T000000Z"}},
                  kEmptyHash};
  EXPECT_EQ(StringToSign("20130524T000000Z", scope, CanonicalRequest(request)),
            "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
            "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
  EXPECT_EQ(Authorization(credentials, scope, "20130524T000000Z", request),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(SigV4Test, AmzDateIsUtcBasicFormat) {
  const absl::Time time =
      absl::FromCivil(absl::CivilSecond(2015, 8, 30, 12, 36, 0), absl::UTCTimeZone());
  EXPECT_EQ(AmzDate(time), "20150830T123600Z");
}

TEST(SigV4Test, ObjectKeysAreEncodedByteForByteWithoutNormalizing) {
  EXPECT_EQ(UriEncode("/bucket/stream=a:b/x y+z~", true), "/bucket/stream%3Da%3Ab/x%20y%2Bz~");
  EXPECT_EQ(UriEncode("a/b", false), "a%2Fb");
}

}  // namespace
}  // namespace keel::sigv4
