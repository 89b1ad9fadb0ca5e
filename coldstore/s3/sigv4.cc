#include "keel/coldstore/s3/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace keel::sigv4 {
namespace {

constexpr absl::string_view kAlgorithm = "AWS4-HMAC-SHA256";

bool Unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

// Trims and collapses runs of spaces to one, as canonical header values are.
std::string CanonicalValue(absl::string_view value) {
  value = absl::StripAsciiWhitespace(value);
  std::string out;
  out.reserve(value.size());
  bool in_space = false;
  for (char c : value) {
    if (c == ' ' || c == '\t') {
      if (!in_space) out.push_back(' ');
      in_space = true;
    } else {
      out.push_back(c);
      in_space = false;
    }
  }
  return out;
}

// Lower-case names, each with its values joined by ',' in the order given,
// sorted by name.
std::map<std::string, std::string> CanonicalHeaders(const Pairs& headers) {
  std::map<std::string, std::string> canonical;
  for (const auto& [name, value] : headers) {
    std::string& joined = canonical[absl::AsciiStrToLower(name)];
    if (!joined.empty()) joined.push_back(',');
    joined += CanonicalValue(value);
  }
  return canonical;
}

std::string CanonicalQuery(const Pairs& query) {
  std::vector<std::pair<std::string, std::string>> encoded;
  encoded.reserve(query.size());
  for (const auto& [name, value] : query) {
    encoded.emplace_back(UriEncode(name, false), UriEncode(value, false));
  }
  std::sort(encoded.begin(), encoded.end());
  return absl::StrJoin(encoded, "&", [](std::string* out, const auto& pair) {
    absl::StrAppend(out, pair.first, "=", pair.second);
  });
}

}  // namespace

std::string Hex(absl::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 0xf]);
  }
  return out;
}

std::string Sha256Hex(absl::string_view bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
  return Hex(absl::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

std::string HmacSha256(absl::string_view key, absl::string_view data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &size);
  return std::string(reinterpret_cast<const char*>(mac), size);
}

std::string AmzDate(absl::Time time) {
  return absl::FormatTime("%Y%m%dT%H%M%SZ", time, absl::UTCTimeZone());
}

std::string UriEncode(absl::string_view text, bool keep_slash) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (Unreserved(c) || (keep_slash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kDigits[c >> 4]);
      out.push_back(kDigits[c & 0xf]);
    }
  }
  return out;
}

std::string EncodedTarget(const Request& request) {
  std::string target = UriEncode(request.path, true);
  if (!request.query.empty()) absl::StrAppend(&target, "?", CanonicalQuery(request.query));
  return target;
}

std::string SignedHeaders(const Request& request) {
  std::vector<std::string> names;
  for (const auto& [name, value] : CanonicalHeaders(request.headers)) names.push_back(name);
  return absl::StrJoin(names, ";");
}

std::string CanonicalRequest(const Request& request) {
  std::string headers;
  for (const auto& [name, value] : CanonicalHeaders(request.headers)) {
    absl::StrAppend(&headers, name, ":", value, "\n");
  }
  return absl::StrCat(request.method, "\n", UriEncode(request.path, true), "\n",
                      CanonicalQuery(request.query), "\n", headers, "\n", SignedHeaders(request),
                      "\n", request.payload_hash);
}

std::string CredentialScope(absl::string_view amz_date, const Scope& scope) {
  return absl::StrCat(amz_date.substr(0, 8), "/", scope.region, "/", scope.service,
                      "/aws4_request");
}

std::string StringToSign(absl::string_view amz_date, const Scope& scope,
                         absl::string_view canonical_request) {
  return absl::StrCat(kAlgorithm, "\n", amz_date, "\n", CredentialScope(amz_date, scope), "\n",
                      Sha256Hex(canonical_request));
}

std::string SigningKey(absl::string_view secret, absl::string_view amz_date, const Scope& scope) {
  const std::string date_key = HmacSha256(absl::StrCat("AWS4", secret), amz_date.substr(0, 8));
  const std::string region_key = HmacSha256(date_key, scope.region);
  const std::string service_key = HmacSha256(region_key, scope.service);
  return HmacSha256(service_key, "aws4_request");
}

std::string Authorization(const Credentials& credentials, const Scope& scope,
                          absl::string_view amz_date, const Request& request) {
  const std::string signature =
      Hex(HmacSha256(SigningKey(credentials.secret_access_key, amz_date, scope),
                     StringToSign(amz_date, scope, CanonicalRequest(request))));
  return absl::StrCat(kAlgorithm, " Credential=", credentials.access_key_id, "/",
                      CredentialScope(amz_date, scope), ", SignedHeaders=", SignedHeaders(request),
                      ", Signature=", signature);
}

}  // namespace keel::sigv4
