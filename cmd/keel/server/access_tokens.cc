#include "keel/cmd/keel/server/access_tokens.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "keel/core/errors.h"

namespace keel::server {
namespace {

constexpr absl::string_view kHashPrefix = "sha256:";

bool IsTokenText(absl::string_view token) {
  for (unsigned char c : token) {
    if (c <= 0x20 || c >= 0x7f) return false;
  }
  return true;
}

bool IsLowerHex(absl::string_view text) {
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

TokenDigest DigestOf(absl::string_view token) {
  TokenDigest digest{};
  unsigned int size = 0;
  EVP_Digest(token.data(), token.size(), digest.data(), &size, EVP_sha256(), nullptr);
  return digest;
}

std::string TokenHashLine(absl::string_view token, const Grant& grant) {
  const TokenDigest digest = DigestOf(token);
  return absl::StrCat(kHashPrefix,
                      absl::BytesToHexString(absl::string_view(
                          reinterpret_cast<const char*>(digest.data()), digest.size())),
                      " ", grant.ToString());
}

absl::StatusOr<AccessTokens> AccessTokens::Parse(absl::string_view text) {
  AccessTokens tokens;
  std::vector<TokenDigest> seen;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<absl::string_view> words =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipWhitespace());
    auto bad = [&](absl::string_view why) {
      return InvalidArgument(absl::StrCat("access tokens, line ", line_number, ": ", why));
    };
    TokenDigest digest{};
    std::shared_ptr<const Grant> grant;
    if ((words[0] == "read" || words[0] == "write") && words.size() == 2 &&
        !absl::StartsWith(words[1], kHashPrefix)) {
      // The first version's line: a token in clear text.
      if (words[1].size() < kMinTokenLength || !IsTokenText(words[1])) {
        return bad(absl::StrCat("a token is at least ", kMinTokenLength,
                                " printable characters without spaces"));
      }
      digest = DigestOf(words[1]);
      const absl::string_view read_everything[] = {"read"};
      absl::StatusOr<Grant> parsed =
          words[0] == "write" ? Grant::All() : Grant::Parse(absl::MakeConstSpan(read_everything));
      grant = std::make_shared<const Grant>(*std::move(parsed));
      tokens.legacy_lines_.push_back(line_number);
    } else {
      absl::string_view hash = words[0];
      if (!absl::ConsumePrefix(&hash, kHashPrefix) || hash.size() != 64 || !IsLowerHex(hash)) {
        return bad(
            "want 'sha256:<64 lower-case hex digits> <scope> ... [tenant=<tenant>]' (`keel "
            "token hash` prints one), or the old '<read|write> <token>'");
      }
      const std::string bytes = absl::HexStringToBytes(hash);
      std::copy(bytes.begin(), bytes.end(), digest.begin());
      absl::StatusOr<Grant> parsed = Grant::Parse(absl::MakeConstSpan(words).subspan(1));
      if (!parsed.ok()) return bad(parsed.status().message());
      grant = std::make_shared<const Grant>(*std::move(parsed));
    }
    for (const TokenDigest& known : seen) {
      if (known == digest) return bad("the token is listed twice");
    }
    seen.push_back(digest);
    tokens.tokens_.emplace_back(digest, std::move(grant));
  }
  if (tokens.tokens_.empty()) return InvalidArgument("access tokens: the file lists no token");
  return tokens;
}

absl::StatusOr<AccessTokens> AccessTokens::Load(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return absl::NotFoundError(absl::StrCat("cannot read access tokens file '", path, "'"));
  std::ostringstream text;
  text << file.rdbuf();
  return Parse(text.str());
}

std::shared_ptr<const Grant> AccessTokens::Find(absl::string_view token) const {
  const TokenDigest digest = DigestOf(token);
  std::shared_ptr<const Grant> found;
  for (const auto& [known, grant] : tokens_) {
    if (CRYPTO_memcmp(known.data(), digest.data(), digest.size()) == 0) found = grant;
  }
  return found;
}

}  // namespace keel::server
