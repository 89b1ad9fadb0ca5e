#include "keel/cmd/keel/server/authenticator.h"

#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::server {

absl::StatusOr<Authenticator::Sources> Authenticator::Read(const AuthOptions& options) {
  Sources sources;
  if (!options.tokens_file.empty()) {
    KEEL_ASSIGN_OR_RETURN(AccessTokens tokens, AccessTokens::Load(options.tokens_file));
    sources.tokens = std::make_shared<const AccessTokens>(std::move(tokens));
  }
  if (options.jwt.configured()) {
    KEEL_ASSIGN_OR_RETURN(sources.jwt, JwtVerifier::Load(options.jwt));
  }
  return sources;
}

absl::StatusOr<std::unique_ptr<Authenticator>> Authenticator::Load(AuthOptions options) {
  if (!options.configured()) return InvalidArgument("no tokens file and no JWT key");
  KEEL_ASSIGN_OR_RETURN(Sources sources, Read(options));
  return std::unique_ptr<Authenticator>(new Authenticator(std::move(options), std::move(sources)));
}

absl::StatusOr<std::unique_ptr<Authenticator>> Authenticator::FromTokens(absl::string_view text) {
  KEEL_ASSIGN_OR_RETURN(AccessTokens tokens, AccessTokens::Parse(text));
  Sources sources;
  sources.tokens = std::make_shared<const AccessTokens>(std::move(tokens));
  return std::unique_ptr<Authenticator>(new Authenticator(AuthOptions{}, std::move(sources)));
}

Authenticator::Sources Authenticator::Current() const {
  ReaderMutexLock lock(&mu_);
  return sources_;
}

absl::StatusOr<std::shared_ptr<const Grant>> Authenticator::Authenticate(absl::string_view token,
                                                                         absl::Time now) const {
  const Sources sources = Current();
  if (sources.jwt != nullptr && JwtVerifier::LooksLikeJwt(token)) {
    KEEL_ASSIGN_OR_RETURN(Grant grant, sources.jwt->Verify(token, now));
    return std::make_shared<const Grant>(std::move(grant));
  }
  std::shared_ptr<const Grant> grant =
      sources.tokens == nullptr ? nullptr : sources.tokens->Find(token);
  if (grant == nullptr) return absl::UnauthenticatedError("the token is not valid");
  return grant;
}

absl::Status Authenticator::Reload() {
  if (!options_.configured()) return absl::OkStatus();
  KEEL_ASSIGN_OR_RETURN(Sources sources, Read(options_));
  MutexLock lock(&mu_);
  sources_ = std::move(sources);
  return absl::OkStatus();
}

std::vector<int> Authenticator::LegacyLines() const {
  const Sources sources = Current();
  return sources.tokens == nullptr ? std::vector<int>() : sources.tokens->legacy_lines();
}

}  // namespace keel::server
