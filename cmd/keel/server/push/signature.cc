#include "keel/cmd/keel/server/push/signature.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace keel::push {

std::string SignPayload(absl::string_view secret, int64_t timestamp, absl::string_view body) {
  const std::string message = absl::StrCat(timestamp, ".", body);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &length);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kHex[mac[i] >> 4]);
    hex.push_back(kHex[mac[i] & 0xf]);
  }
  return hex;
}

std::string SignatureHeaderValue(const std::vector<std::string>& secrets, int64_t timestamp,
                                 absl::string_view body) {
  std::string value;
  for (const std::string& secret : secrets) {
    if (!value.empty()) value.push_back(',');
    absl::StrAppend(&value, "v1=", SignPayload(secret, timestamp, body));
  }
  return value;
}

absl::Status VerifySignature(absl::string_view secret, absl::string_view header,
                             absl::string_view timestamp, absl::string_view body, absl::Time now,
                             absl::Duration tolerance) {
  int64_t seconds = 0;
  if (!absl::SimpleAtoi(timestamp, &seconds)) {
    return absl::UnauthenticatedError("the timestamp is not a number of seconds");
  }
  if (absl::AbsDuration(now - absl::FromUnixSeconds(seconds)) > tolerance) {
    return absl::UnauthenticatedError("the timestamp is outside the tolerance (a replay?)");
  }
  const std::string expected = SignPayload(secret, seconds, body);
  for (absl::string_view entry : absl::StrSplit(header, ',')) {
    entry = absl::StripAsciiWhitespace(entry);
    if (!absl::ConsumePrefix(&entry, "v1=") || entry.size() != expected.size()) continue;
    if (CRYPTO_memcmp(entry.data(), expected.data(), expected.size()) == 0) {
      return absl::OkStatus();
    }
  }
  return absl::UnauthenticatedError("no signature matches the secret");
}

}  // namespace keel::push
