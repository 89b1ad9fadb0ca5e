// AWS Signature Version 4 for requests to S3-compatible object stores:
// the canonical request, the string to sign, the signing key and the
// Authorization header, as AWS specifies them ("Create a signed AWS API
// request"), over OpenSSL's SHA-256 and HMAC. Checked against AWS's
// published test suite and documented examples
// (tests/coldstore/sigv4_test.cc).
//
// The caller gives the path and the query unencoded; they are
// percent-encoded here (every byte but A-Z a-z 0-9 - . _ ~, and '/' in the
// path) exactly as the request must send them (EncodedTarget), so the
// signed and the sent forms cannot differ. S3 does not normalize paths, so
// neither does this ("a//b" stays).
//
// Thread safety: pure functions.
#ifndef KEEL_COLDSTORE_S3_SIGV4_H_
#define KEEL_COLDSTORE_S3_SIGV4_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace keel::sigv4 {

using Pairs = std::vector<std::pair<std::string, std::string>>;

struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // Temporary credentials only; sent as x-amz-security-token.
};

struct Scope {
  std::string region;   // "us-east-1"
  std::string service;  // "s3"
};

struct Request {
  std::string method;  // "GET"
  std::string path;    // Unencoded, starting with '/'.
  Pairs query;         // Unencoded names and values, in any order.
  // Every header to sign, Host and X-Amz-Date among them (any case, any
  // order); values as sent.
  Pairs headers;
  // Hex SHA-256 of the body, or "UNSIGNED-PAYLOAD".
  std::string payload_hash;
};

// Lower-case hex of SHA-256(bytes), and HMAC-SHA256(key, data) raw.
std::string Sha256Hex(absl::string_view bytes);
std::string HmacSha256(absl::string_view key, absl::string_view data);
std::string Hex(absl::string_view bytes);

// "20150830T123600Z" for `time` (UTC), the X-Amz-Date value.
std::string AmzDate(absl::Time time);

// Percent-encodes as SigV4 wants (upper-case hex); '/' kept when
// `keep_slash`.
std::string UriEncode(absl::string_view text, bool keep_slash);

// The path then '?' and the query, both encoded as they are signed: the
// request target to send.
std::string EncodedTarget(const Request& request);

std::string CanonicalRequest(const Request& request);
// "host;x-amz-date", the names of the signed headers.
std::string SignedHeaders(const Request& request);
// "20150830/us-east-1/service/aws4_request".
std::string CredentialScope(absl::string_view amz_date, const Scope& scope);
std::string StringToSign(absl::string_view amz_date, const Scope& scope,
                         absl::string_view canonical_request);
// The raw signing key of `secret` for the day of `amz_date` and `scope`.
std::string SigningKey(absl::string_view secret, absl::string_view amz_date, const Scope& scope);

// The Authorization header's value for `request` sent at `amz_date` (which
// must equal its X-Amz-Date header).
std::string Authorization(const Credentials& credentials, const Scope& scope,
                          absl::string_view amz_date, const Request& request);

}  // namespace keel::sigv4

#endif  // KEEL_COLDSTORE_S3_SIGV4_H_
