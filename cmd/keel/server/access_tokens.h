// AccessTokens: the static bearer tokens a daemon accepts (`--auth-tokens
// FILE`), each with its Grant (rfcs/0004-http-api.md §13).
//
// The file stores no token, only its SHA-256: one token a line,
//   sha256:<64 hex digits> <scope> [<scope> ...] [tenant=<tenant>]
// with scopes and tenant in Grant's text form (`read:orders. publish:orders.
// tenant=acme`); `keel token hash` prints such a line for a token. Blank
// lines and lines starting with `#` are skipped.
//
// The lines of the first version, `read <token>` and `write <token>` (a
// token in clear text, of at least kMinTokenLength printable characters),
// still work: `read` is the scope `read` on every stream, `write` every
// scope on every stream. Each is reported in legacy_lines() so the daemon can
// warn that the file holds a secret in clear text.
//
// A presented token is hashed and its hash compared with every stored one
// in constant time (CRYPTO_memcmp, no early exit): the time taken tells
// nothing about how close a guess was, nor which line matched.
//
// Thread safety: immutable after Parse; Find may be called concurrently.
#ifndef KEEL_CMD_KEEL_SERVER_ACCESS_TOKENS_H_
#define KEEL_CMD_KEEL_SERVER_ACCESS_TOKENS_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/cmd/keel/server/grant.h"

namespace keel::server {

using TokenDigest = std::array<uint8_t, 32>;

// SHA-256 of `token`.
TokenDigest DigestOf(absl::string_view token);

// The tokens-file line of `token` with `grant`: "sha256:<hex> <grant>".
std::string TokenHashLine(absl::string_view token, const Grant& grant);

class AccessTokens {
 public:
  // Least length of a token in clear text (legacy lines).
  static constexpr size_t kMinTokenLength = 16;

  // Parses the file's text; kInvalidArgument names the first bad line.
  static absl::StatusOr<AccessTokens> Parse(absl::string_view text);
  // Reads and parses the file at `path`; kNotFound when it cannot be read.
  static absl::StatusOr<AccessTokens> Load(const std::string& path);

  // The grant of `token`, or null for a token not in the file.
  std::shared_ptr<const Grant> Find(absl::string_view token) const;
  size_t size() const { return tokens_.size(); }
  // The line numbers of `read <token>` / `write <token>` lines.
  const std::vector<int>& legacy_lines() const { return legacy_lines_; }

 private:
  std::vector<std::pair<TokenDigest, std::shared_ptr<const Grant>>> tokens_;
  std::vector<int> legacy_lines_;
};

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_ACCESS_TOKENS_H_
