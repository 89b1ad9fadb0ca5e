#include "keel/cmd/keel/server/request_gate.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "keel/cmd/keel/server/http_errors.h"
#include "keel/cmd/keel/server/json_codec.h"
#include "keel/core/publish_validation.h"

namespace keel::server {
namespace {

constexpr absl::string_view kQueryToken = "access_token";
constexpr absl::string_view kChallenge = "Bearer realm=\"keel\"";
constexpr absl::string_view kBearer = "Bearer ";
// A Retry-After past this many seconds is sent as this (a rate this low is
// refused by ValidateServerOptions anyway).
constexpr double kLongestRetryAfterSeconds = 1e9;
// Retry-After of an SSE stream refused for too many open ones: when one
// closes is unknown, and a reconnecting reader should neither hammer the
// daemon nor wait long.
constexpr int kStreamRetryAfterSeconds = 2;

// What `request` needs of a token: see the class comment.
Scope NeededScope(const HttpRequest& request, const RouteMatch& route) {
  if (route.route != nullptr) return route.route->scope;
  if (route.open_path) return Scope::kNone;
  return request.method == "GET" || request.method == "HEAD" ? Scope::kRead : Scope::kPublish;
}

// An error response with the header that tells the client what to do, and
// leave for a cross-origin page to read it.
RequestGate::Refusal Refuse(int status, absl::string_view code, absl::string_view message,
                            absl::string_view header, std::string value) {
  RequestGate::Refusal refusal{ErrorResponse(status, code, message), code};
  refusal.response.headers.emplace_back(std::string(header), std::move(value));
  refusal.response.headers.emplace_back("Access-Control-Expose-Headers", std::string(header));
  return refusal;
}

// RFC 6750's challenge, with its error code when the request had a token.
std::string Challenge(absl::string_view error) {
  return error.empty() ? std::string(kChallenge)
                       : absl::StrCat(kChallenge, ", error=\"", error, "\"");
}

// The stream a request is about: its route's {stream}, or for a path no
// route serves, the segment after /v1/streams/; "" for neither.
absl::string_view StreamOf(const HttpRequest& request, const RouteMatch& route) {
  if (route.path_found()) return route.params.Get("stream");
  const auto& s = request.segments;
  return s.size() >= 3 && s[0] == "v1" && s[1] == "streams" ? absl::string_view(s[2])
                                                            : absl::string_view();
}

// 403 naming what is missing: in the body (`scope`, and `stream` unless
// the scope is needed on every stream) and in the challenge's `scope`
// ("read:orders", RFC 6750 §3).
RequestGate::Refusal Forbidden(const MissingScope& missing) {
  const absl::string_view scope = TokenScopeName(missing.scope);
  std::string details = absl::StrCat("\"scope\":\"", scope, "\"");
  std::string wanted(scope);
  if (!missing.stream.empty()) {
    absl::StrAppend(&details, ",\"stream\":", JsonString(missing.stream));
    // The gate runs before the name is checked: only a valid name, with
    // nothing to quote or escape, goes into a header.
    if (ValidateStreamName(missing.stream).ok()) absl::StrAppend(&wanted, ":", missing.stream);
  }
  RequestGate::Refusal refusal{ErrorResponse(403, "permission_denied", missing.message, details),
                               "permission_denied"};
  refusal.response.headers.emplace_back(
      "WWW-Authenticate",
      absl::StrCat(Challenge("insufficient_scope"), ", scope=\"", wanted, "\""));
  refusal.response.headers.emplace_back("Access-Control-Expose-Headers", "WWW-Authenticate");
  return refusal;
}

RequestGate::Refusal Unauthenticated(absl::string_view message, absl::string_view error) {
  return Refuse(401, "unauthenticated", message, "WWW-Authenticate", Challenge(error));
}

}  // namespace

// A limiter of `per_second` with `burst` (0: one second's worth), or null
// for a rate of 0.
std::unique_ptr<RateLimiter> MakeLimiter(double per_second, double burst) {
  if (per_second <= 0) return nullptr;
  return std::make_unique<RateLimiter>(per_second,
                                       burst > 0 ? burst : std::max(1.0, std::ceil(per_second)));
}

// 429 with the wait until the next request would pass.
RequestGate::Refusal OverRate(absl::string_view what, double per_second, absl::Duration wait) {
  const int64_t seconds = static_cast<int64_t>(
      std::min(std::ceil(absl::ToDoubleSeconds(wait)), kLongestRetryAfterSeconds));
  return Refuse(
      429, "rate_limited",
      absl::StrFormat("more than %g %s per second; retry in %d s", per_second, what, seconds),
      "Retry-After", absl::StrCat(seconds));
}

RequestGate::RequestGate(std::shared_ptr<const Authenticator> authenticator, double per_second,
                         double burst, TokenLimits token_limits)
    : authenticator_(std::move(authenticator)),
      limiter_(MakeLimiter(per_second, burst)),
      publish_limiter_(MakeLimiter(token_limits.publish_rate, token_limits.publish_burst)),
      streams_(token_limits.sse_streams_total, token_limits.sse_streams) {}

std::optional<RequestGate::Refusal> RequestGate::Check(HttpRequest& request,
                                                       const RouteMatch& route,
                                                       absl::string_view client,
                                                       RateLimiter::Clock::time_point now) {
  if (authenticator_ == nullptr && limiter_ == nullptr && !limits_tokens()) return std::nullopt;
  const Scope needed = NeededScope(request, route);
  if (needed == Scope::kNone) return std::nullopt;
  if (limiter_ != nullptr) {
    if (std::optional<absl::Duration> wait = limiter_->Admit(client, now)) {
      return OverRate("requests from this client", limiter_->per_second(), *wait);
    }
  }
  if (request.method == "OPTIONS") return std::nullopt;
  if (authenticator_ != nullptr) {
    if (std::optional<Refusal> refused = CheckToken(request, route)) return refused;
  }
  return CheckPublishRate(request, route, client, now);
}

std::optional<RequestGate::Refusal> RequestGate::CheckPublishRate(
    HttpRequest& request, const RouteMatch& route, absl::string_view client,
    RateLimiter::Clock::time_point now) {
  if (!limits_tokens()) return std::nullopt;
  if (authenticator_ == nullptr) request.limit_key = std::string(client);
  if (publish_limiter_ == nullptr || route.route == nullptr ||
      route.route->scope != Scope::kPublish) {
    return std::nullopt;
  }
  if (std::optional<absl::Duration> wait = publish_limiter_->Admit(request.limit_key, now)) {
    return OverRate(
        authenticator_ != nullptr ? "publishes with this token" : "publishes from this client",
        publish_limiter_->per_second(), *wait);
  }
  return std::nullopt;
}

std::optional<RequestGate::Refusal> RequestGate::AdmitStream(
    const HttpRequest& request, std::unique_ptr<ConnectionSlot>* slot) {
  if (!streams_.limits()) return std::nullopt;
  ConnectionSlots::Full full;
  *slot = streams_.Acquire(request.limit_key, &full);
  if (full == ConnectionSlots::Full::kNone) return std::nullopt;
  const bool total = full == ConnectionSlots::Full::kTotal;
  return Refuse(
      total ? 503 : 429, "too_many_connections",
      total ? absl::StrCat("the daemon serves at most ", streams_.total_limit(),
                           " SSE streams at once")
            : absl::StrCat("at most ", streams_.per_key_limit(), " SSE streams at once per token"),
      "Retry-After", absl::StrCat(kStreamRetryAfterSeconds));
}

// RFC 6750: a request without a Bearer token (none, or credentials of
// another scheme) gets the bare challenge; an unknown token
// `invalid_token`; a token short of the scope `insufficient_scope`, naming
// the scope it lacks.
std::optional<RequestGate::Refusal> RequestGate::CheckToken(HttpRequest& request,
                                                            const RouteMatch& route) const {
  absl::string_view token;
  const absl::string_view authorization = request.Header("authorization");
  if (absl::StartsWithIgnoreCase(authorization, kBearer)) {
    token = absl::StripAsciiWhitespace(authorization.substr(kBearer.size()));
  } else if (authorization.empty() && route.route != nullptr && route.route->streamed()) {
    // Only an SSE request, which a browser's EventSource makes without
    // headers of its own: elsewhere a URL with a token would travel into
    // proxy logs and Referer headers for nothing.
    token = request.Query(kQueryToken);
  }
  if (token.empty()) {
    return Unauthenticated(
        "this daemon requires a token: 'Authorization: Bearer <token>' (or, opening an SSE "
        "stream, ?access_token=<token>)",
        "");
  }
  absl::StatusOr<std::shared_ptr<const Grant>> grant =
      authenticator_->Authenticate(token, absl::Now());
  if (!grant.ok()) return Unauthenticated(grant.status().message(), "invalid_token");
  if (std::optional<MissingScope> missing = (*grant)->Missing(
          NeededScope(request, route), StreamOf(request, route), route.params.Get("group"))) {
    return Forbidden(*missing);
  }
  request.grant = *std::move(grant);
  if (limits_tokens()) request.limit_key = std::string(token);
  return std::nullopt;
}

absl::string_view RequestGate::Loggable(absl::string_view request_line) const {
  if (authenticator_ == nullptr) return request_line;
  return request_line.substr(0, request_line.find('?'));
}

}  // namespace keel::server
