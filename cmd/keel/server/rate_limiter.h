// RateLimiter: a token bucket per client, for `--rate-limit`.
//
// Each client (the daemon keys clients by address, IPv6 ones by their /64:
// RateLimitKey) may send `burst` requests at once and `per_second` on
// average after that; a request over the limit is refused, takes nothing
// from the bucket, and learns the time until the client's next one would
// be admitted (HTTP 429 with Retry-After, rfcs/0004-http-api.md). Time is
// the monotonic clock: a wall clock stepped back would hold clients off.
//
// At most `max_clients` buckets are kept: when a new client would pass
// that, the buckets that are full again (clients idle long enough to have
// their whole burst back) are dropped, and if that frees less than a tenth
// of them, arbitrary ones up to a tenth. One sweep therefore makes room for
// many new clients, and memory stays bounded whatever the number of
// addresses.
//
// Thread safety: Admit may be called concurrently.
#ifndef KEEL_CMD_KEEL_SERVER_RATE_LIMITER_H_
#define KEEL_CMD_KEEL_SERVER_RATE_LIMITER_H_

#include <chrono>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/core/mutex.h"

namespace keel::server {

class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kDefaultMaxClients = 100'000;

  // `per_second` > 0 and `burst` >= 1.
  RateLimiter(double per_second, double burst, size_t max_clients = kDefaultMaxClients);

  // Takes one request of `client` at `now`: nullopt when admitted, else how
  // long until the client may send its next one.
  std::optional<absl::Duration> Admit(absl::string_view client, Clock::time_point now);

  size_t clients() const;
  double per_second() const { return per_second_; }

 private:
  struct Bucket {
    double tokens = 0;
    Clock::time_point updated;
  };

  void Refill(Bucket& bucket, Clock::time_point now) const;
  void MakeRoom(Clock::time_point now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const double per_second_;
  const double burst_;
  const size_t max_clients_;
  mutable Mutex mu_;
  absl::flat_hash_map<std::string, Bucket> buckets_ ABSL_GUARDED_BY(mu_);
};

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_RATE_LIMITER_H_
