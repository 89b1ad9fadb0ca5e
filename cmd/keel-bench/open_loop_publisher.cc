#include "keel/cmd/keel-bench/open_loop_publisher.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "keel/cmd/keel-bench/http_load.h"
#include "keel/cmd/keel-bench/sse_clients.h"
#include "keel/core/mutex.h"
#include "keel/core/status_macros.h"

namespace keel::bench {

absl::StatusOr<OpenLoopResult> PublishOpenLoop(const OpenLoopOptions& o,
                                               const std::function<void()>& while_waiting) {
  using SteadyClock = std::chrono::steady_clock;
  const uint64_t events = o.events;
  const std::string target = absl::StrCat("/v1/streams/", o.stream, "/events");
  const std::string pad(o.payload_bytes, 'p');
  const SteadyClock::time_point start = SteadyClock::now() + std::chrono::milliseconds(50);
  std::atomic<uint64_t> max_lag_ns{0};
  std::atomic<uint64_t> published{0};
  std::atomic<uint64_t> last_sent_ns{0};
  keel::Mutex publish_mu;
  absl::Status publish_error;
  std::vector<std::thread> publishers;
  for (int p = 0; p < o.publishers; ++p) {
    publishers.emplace_back([&, p] {
      BlockingHttpClient publisher;
      absl::Status status = publisher.Connect("127.0.0.1", o.port);
      for (uint64_t i = static_cast<uint64_t>(p); status.ok() && i < events;
           i += static_cast<uint64_t>(o.publishers)) {
        const SteadyClock::time_point due =
            start +
            std::chrono::nanoseconds(static_cast<int64_t>(1e9 * static_cast<double>(i) / o.rate));
        std::this_thread::sleep_until(due);
        const uint64_t sent = SteadyNowNanos();
        if (i == events - 1) last_sent_ns.store(sent);
        const uint64_t due_ns = static_cast<uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(due.time_since_epoch()).count());
        if (sent > due_ns) {
          uint64_t lag = sent - due_ns, seen = max_lag_ns.load();
          while (lag > seen && !max_lag_ns.compare_exchange_weak(seen, lag)) {
          }
        }
        // The send time comes last, where the clients look for it first.
        const std::string body = absl::StrCat("{\"type\":\"", o.type, "\",\"data\":{\"n\":", i,
                                              ",\"pad\":\"", pad, "\",\"ts\":", sent, "}}");
        absl::StatusOr<BlockingHttpClient::Response> response =
            publisher.RoundTrip(JsonPostRequest("127.0.0.1", target, body));
        if (!response.ok()) {
          status = response.status();
        } else if (response->status != 201) {
          status = absl::InternalError(absl::StrCat("publish answered ", response->status, ": ",
                                                    response->body.substr(0, 300)));
        } else {
          published.fetch_add(1);
        }
      }
      if (!status.ok()) {
        keel::MutexLock lock(&publish_mu);
        publish_error.Update(status);
      }
    });
  }
  while (published.load() < events) {
    {
      keel::MutexLock lock(&publish_mu);
      if (!publish_error.ok()) break;
    }
    while_waiting();
    absl::SleepFor(absl::Milliseconds(100));
  }
  for (std::thread& t : publishers) t.join();
  KEEL_RETURN_IF_ERROR(publish_error);
  OpenLoopResult result;
  result.publish_seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  result.max_lag_seconds = static_cast<double>(max_lag_ns.load()) / 1e9;
  const uint64_t start_ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(start.time_since_epoch()).count());
  // Sends per second over the schedule (event 0 at start, event n-1 last).
  result.achieved_rate = events > 1 && last_sent_ns.load() > start_ns
                             ? static_cast<double>(events - 1) /
                                   (static_cast<double>(last_sent_ns.load() - start_ns) / 1e9)
                             : o.rate;
  return result;
}

}  // namespace keel::bench
