#include "keel/cmd/keel/server/access_tokens.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/ascii.h"
#include "keel/core/errors.h"

namespace keel::server {
namespace {

// Equal without an early exit: every byte of the known token is compared.
bool SameToken(absl::string_view a, absl::string_view b) {
  unsigned char differ = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    differ |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  }
  return differ == 0;
}

bool IsTokenText(absl::string_view token) {
  for (unsigned char c : token) {
    if (c <= 0x20 || c >= 0x7f) return false;
  }
  return true;
}

std::optional<Access> AccessNamed(absl::string_view name) {
  if (name == "read") return Access::kRead;
  if (name == "write") return Access::kWrite;
  return std::nullopt;
}

}  // namespace

bool Allows(Access access, Scope scope) {
  switch (access) {
    case Access::kRead:
      return scope == Scope::kNone || scope == Scope::kRead;
    case Access::kWrite:
      return true;
  }
  return false;
}

absl::StatusOr<AccessTokens> AccessTokens::Parse(absl::string_view text) {
  AccessTokens tokens;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<absl::string_view> words =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipWhitespace());
    const std::optional<Access> access = words.empty() ? std::nullopt : AccessNamed(words[0]);
    auto bad = [&](absl::string_view why) {
      return InvalidArgument(absl::StrCat("access tokens, line ", line_number, ": ", why));
    };
    if (words.size() != 2 || !access) return bad("want '<read|write> <token>'");
    if (words[1].size() < kMinTokenLength || !IsTokenText(words[1])) {
      return bad(absl::StrCat("a token is at least ", kMinTokenLength,
                              " printable characters without spaces"));
    }
    if (tokens.Find(words[1])) return bad("the token is listed twice");
    tokens.tokens_.emplace_back(std::string(words[1]), *access);
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

std::optional<Access> AccessTokens::Find(absl::string_view token) const {
  std::optional<Access> found;
  for (const auto& [known, access] : tokens_) {
    if (SameToken(known, token)) found = access;
  }
  return found;
}

}  // namespace keel::server
