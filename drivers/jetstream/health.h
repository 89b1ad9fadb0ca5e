// Health: whether JetStream answers, as the bus's own requests found out;
// the bus reports it as its degraded reason (and a server as readiness).
//
// Requests overlap, and one that started during an outage may fail long
// after a later one succeeded (a request timeout is seconds). Each request
// therefore takes a ticket when it starts, and an outcome only counts when
// no request that started later has reported yet: the newest knowledge wins,
// not the slowest answer.
//
// Thread safety: thread-safe.
#ifndef KEEL_DRIVERS_JETSTREAM_HEALTH_H_
#define KEEL_DRIVERS_JETSTREAM_HEALTH_H_

#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "keel/core/errors.h"
#include "keel/core/mutex.h"

namespace keel::jetstream {

class Health {
 public:
  // Taken when a request starts.
  uint64_t Start() {
    MutexLock lock(&mu_);
    return ++started_;
  }

  // The outcome of the request that took `ticket`: success clears the
  // problem, `unavailable` sets it, other errors say nothing about JetStream.
  void Note(uint64_t ticket, const absl::Status& status) {
    if (!status.ok() && GetErrorKind(status) != ErrorKind::kUnavailable) return;
    MutexLock lock(&mu_);
    if (ticket < newest_noted_) return;
    newest_noted_ = ticket;
    problem_ = status.ok() ? "" : std::string(status.message());
  }

  // Runs `request` and notes its outcome; returns what it returned.
  template <typename Request>
  auto Observe(Request request) {
    const uint64_t ticket = Start();
    auto result = request();
    Note(ticket, StatusOf(result));
    return result;
  }

  // Empty while JetStream answers.
  std::string Problem() const {
    MutexLock lock(&mu_);
    return problem_;
  }

 private:
  static const absl::Status& StatusOf(const absl::Status& status) { return status; }
  template <typename T>
  static const absl::Status& StatusOf(const absl::StatusOr<T>& result) {
    return result.status();
  }

  mutable Mutex mu_;
  uint64_t started_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t newest_noted_ ABSL_GUARDED_BY(mu_) = 0;
  std::string problem_ ABSL_GUARDED_BY(mu_);
};

}  // namespace keel::jetstream

#endif  // KEEL_DRIVERS_JETSTREAM_HEALTH_H_
