// RequestGate: what a request must pass before it is served — the client's
// rate limit (`--rate-limit`), then its bearer token (`--auth-tokens`, JWT
// keys: Authenticator). rfcs/0004-http-api.md §13.
//
// - A request needs the Scope its route declares (RouteTable) on the
//   route's {stream}, and a tenant-bound token owns the route's {group}
//   (Grant::Missing). One no route serves (404, 405) needs what its method
//   would: kRead for GET and HEAD, kPublish otherwise (on the path's stream
//   segment, when it has one), so a read-only token's write is refused
//   whether or not the path exists.
// - Health probes (routes of Scope::kNone, on their path with any method)
//   always pass: an orchestrator probes without credentials, and a probe
//   refused would restart a healthy daemon.
// - CORS preflights (OPTIONS) pass the token check: browsers send them
//   without credentials.
// - A token comes from `Authorization: Bearer <token>`, or for a request to
//   a streamed route (SSE) from the `access_token` query parameter (a
//   browser's EventSource cannot set headers). Missing or unknown: 401
//   `unauthenticated`; a token whose access does not allow the scope
//   (Allows): 403 `permission_denied`. Both carry a `WWW-Authenticate:
//   Bearer` challenge (RFC 6750).
// - Over the rate: 429 `rate_limited` with `Retry-After` (whole seconds,
//   rounded up).
// - Per token (TokenLimits; a daemon without credentials counts each client
//   address as a token): publishes over the token's rate get 429
//   `rate_limited`; an SSE stream past the token's open streams 429
//   `too_many_connections`, past the daemon's 503 `too_many_connections`,
//   both with `Retry-After` (AdmitStream).
//
// A gate with neither tokens nor a rate passes everything and costs one
// branch per request.
//
// Thread safety: Check may be called concurrently.
#ifndef KEEL_CMD_KEEL_SERVER_REQUEST_GATE_H_
#define KEEL_CMD_KEEL_SERVER_REQUEST_GATE_H_

#include <memory>
#include <optional>

#include "absl/strings/string_view.h"
#include "keel/cmd/keel/server/authenticator.h"
#include "keel/cmd/keel/server/connection_slots.h"
#include "keel/cmd/keel/server/http_types.h"
#include "keel/cmd/keel/server/rate_limiter.h"
#include "keel/cmd/keel/server/route_table.h"

namespace keel::server {

// Limits per token; 0 for none.
struct TokenLimits {
  double publish_rate = 0;       // Publish requests per second, on average.
  double publish_burst = 0;      // At once; 0 takes one second's worth, at least 1.
  size_t sse_streams = 0;        // Open SSE streams of one token.
  size_t sse_streams_total = 0;  // Open SSE streams of the daemon.
};

class RequestGate {
 public:
  // No token check without `authenticator`; no rate limit when
  // `per_second` is 0. A `burst` of 0 takes one second's worth, at least 1
  // request.
  RequestGate(std::shared_ptr<const Authenticator> authenticator, double per_second, double burst,
              TokenLimits token_limits = {});

  // Whether Check needs the client's address (a limit counts it).
  bool needs_client() const {
    return limiter_ != nullptr || (authenticator_ == nullptr &&
                                   (publish_limiter_ != nullptr || streams_.per_key_limit() > 0));
  }

  struct Refusal {
    HttpResponse response;
    absl::string_view code;  // The error code, for the metrics.
  };

  // nullopt to serve `request`, which resolved to `route` (Api::Resolve),
  // of `client` (RateLimitKey) at `now`, after setting its grant; else the
  // refusal to answer with.
  std::optional<Refusal> Check(HttpRequest& request, const RouteMatch& route,
                               absl::string_view client, RateLimiter::Clock::time_point now);
  // Check now; only a rate limit reads the clock.
  std::optional<Refusal> Check(HttpRequest& request, const RouteMatch& route,
                               absl::string_view client) {
    return Check(request, route, client,
                 limiter_ || publish_limiter_ ? RateLimiter::Clock::now()
                                              : RateLimiter::Clock::time_point());
  }

  // An SSE stream of `request` (admitted by Check) may open: its slot,
  // held while the stream is open, in `*slot`. Else the refusal.
  std::optional<Refusal> AdmitStream(const HttpRequest& request,
                                     std::unique_ptr<ConnectionSlot>* slot);

  // `request_line` ("METHOD target") as the request log may show it: a
  // daemon with tokens logs no query, which may carry one (`access_token`,
  // its name perhaps percent-encoded).
  absl::string_view Loggable(absl::string_view request_line) const;

 private:
  std::optional<Refusal> CheckToken(HttpRequest& request, const RouteMatch& route) const;
  std::optional<Refusal> CheckPublishRate(HttpRequest& request, const RouteMatch& route,
                                          absl::string_view client,
                                          RateLimiter::Clock::time_point now);
  bool limits_tokens() const { return publish_limiter_ != nullptr || streams_.per_key_limit() > 0; }

  const std::shared_ptr<const Authenticator> authenticator_;
  const std::unique_ptr<RateLimiter> limiter_;
  const std::unique_ptr<RateLimiter> publish_limiter_;  // Per token.
  ConnectionSlots streams_;
};

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_REQUEST_GATE_H_
