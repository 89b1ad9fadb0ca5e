// PushReceiver: the endpoint of `keel-bench push` — an HTTP/1.1 server on
// 127.0.0.1 that answers every POST 200 at once, with no body, and counts
// the events of each batch (the entries of its Keel-Event-Ids header). It
// also reads the `"ts":<steady ns>` each benchmark event carries in its
// data and records publish-to-receive latency. One thread per kept-alive
// connection; a subscription keeps one per lane.
//
// Thread safety: all methods are safe to call concurrently.
#ifndef KEEL_CMD_KEEL_BENCH_PUSH_RECEIVER_H_
#define KEEL_CMD_KEEL_BENCH_PUSH_RECEIVER_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "keel/cmd/keel-bench/latency_histogram.h"
#include "keel/core/mutex.h"

namespace keel::bench {

class PushReceiver {
 public:
  static absl::StatusOr<std::unique_ptr<PushReceiver>> Start();
  ~PushReceiver();

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/push"; }
  uint64_t events() const { return events_.load(std::memory_order_acquire); }
  uint64_t requests() const { return requests_.load(std::memory_order_relaxed); }
  // Latencies of the events that carried "ts" since the last call.
  Histogram TakeLatencies();

 private:
  explicit PushReceiver(int listen_fd, uint16_t port) : listen_fd_(listen_fd), port_(port) {}
  void Accept();
  void Serve(int fd);
  void Count(const std::string& headers, const std::string& body);

  const int listen_fd_;
  const uint16_t port_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> events_{0};
  std::atomic<uint64_t> requests_{0};
  std::thread acceptor_;
  Mutex mu_;
  Histogram latencies_ ABSL_GUARDED_BY(mu_);
  std::vector<int> fds_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> connections_ ABSL_GUARDED_BY(mu_);
};

}  // namespace keel::bench

#endif  // KEEL_CMD_KEEL_BENCH_PUSH_RECEIVER_H_
