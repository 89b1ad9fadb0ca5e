// SseClients: many SSE connections to one stream of a Keel daemon, from few
// threads, for the fan-out and catch-up benchmarks (`keel-bench sse` and
// `keel-bench jetstream`). Every client checks that the stream's sequences
// arrive in order, none missing or repeated (a failure otherwise), and
// records the latency from the publish time each event carries in its data
// (`"ts":<steady-clock ns>`, written last) to the read of its frame.
//
// Thread safety: SseClients is started and stopped by one thread; its
// counters may be read from any thread meanwhile.
#ifndef KEEL_CMD_KEEL_BENCH_SSE_CLIENTS_H_
#define KEEL_CMD_KEEL_BENCH_SSE_CLIENTS_H_

#include <sys/epoll.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "keel/cmd/keel-bench/latency_histogram.h"
#include "keel/core/mutex.h"

namespace keel::bench {

// The steady clock in nanoseconds: the publish time events carry.
uint64_t SteadyNowNanos();

// What one client thread accumulates.
// What one client thread accumulates.
struct ThreadStats {
  Histogram latency;
  // The same by the second of the event's send time (since the first send
  // this thread saw), to tell a steady delay from a stall.
  std::vector<Histogram> by_second;
  uint64_t first_second = 0;  // 0: nothing seen yet.
  std::vector<char> scratch = std::vector<char>(256 * 1024);
};

class SseClients;

// One SSE connection. Asio connects it and sends the request; then the
// socket leaves Asio for a reader thread's epoll set, where a ready
// connection costs one recv into the thread's scratch buffer and nothing
// else. With Asio, each wakeup cost a second read that found nothing (or an
// epoll_ctl to wait again): the client shares the machine's two vCPUs with
// the daemon it measures, so its cost is taken from the daemon. The set is
// edge-triggered: every arrival of data makes an edge, so a read that comes
// back short has emptied the socket, and epoll need not poll each
// connection it reported a second time. Only an incomplete trailing frame is
// kept per connection.
class SseClient {
 public:
  SseClient(SseClients& owner, boost::asio::io_context& ioc, size_t index)
      : owner_(owner), socket_(ioc), index_(index) {}
  void Start();
  uint64_t received() const { return received_; }
  uint64_t last_sequence() const { return last_sequence_; }
  bool failed() const { return failed_; }
  // Reader thread: the socket is readable.
  void OnReadable();
  void Close() {
    if (fd_ >= 0) {
      close(fd_);
      fd_ = -1;
    }
    boost::system::error_code ignored;
    socket_.close(ignored);
  }

 private:
  void Attach();
  void Consume(const char* data, size_t size, uint64_t now_ns);
  bool Frame(absl::string_view frame, uint64_t now_ns);
  void Fail(const std::string& why);

  SseClients& owner_;
  boost::asio::ip::tcp::socket socket_;
  int fd_ = -1;  // The socket, once handed to a reader thread.
  const size_t index_;
  std::string pending_;  // An incomplete head or frame.
  std::string request_;
  bool head_done_ = false;
  bool failed_ = false;
  uint64_t received_ = 0;
  uint64_t last_sequence_ = 0;
};

// A set of SSE clients on one stream, connected gradually.
class SseClients {
 public:
  struct Config {
    uint16_t port = 0;
    std::string stream;
    std::string after;  // Query value; "" = the default (latest).
    int connections = 1;
    int threads = 1;
    int connect_parallel = 256;
    bool record_latency = true;
  };

  // One Asio thread connects and sends the requests; `threads` reader
  // threads read (SseClient says why).
  explicit SseClients(Config config)
      : config_(std::move(config)),
        sequence_prefix_(absl::StrCat("{\"stream\":\"", config_.stream, "\",\"sequence\":")) {
    for (int i = 0; i < config_.connections; ++i) {
      clients_.push_back(std::make_unique<SseClient>(*this, connector_, static_cast<size_t>(i)));
    }
    readers_.resize(static_cast<size_t>(std::max(1, config_.threads)));
    stats_.resize(readers_.size());
    for (int& reader : readers_) reader = epoll_create1(EPOLL_CLOEXEC);
  }
  ~SseClients() { Stop(); }

  const Config& config() const { return config_; }
  // How every event's JSON starts, up to its sequence.
  absl::string_view sequence_prefix() const { return sequence_prefix_; }
  boost::asio::ip::tcp::endpoint endpoint() const {
    return boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address_v4("127.0.0.1"),
                                          config_.port);
  }

  void Start() {
    const int first = std::min(config_.connect_parallel, config_.connections);
    next_.store(static_cast<size_t>(first));
    for (int i = 0; i < first; ++i) clients_[static_cast<size_t>(i)]->Start();
    threads_.emplace_back([this] { connector_.run(); });
    for (size_t i = 0; i < readers_.size(); ++i) threads_.emplace_back([this, i] { ReadLoop(i); });
  }

  // Called once per client when its stream started (or failed to).
  void Opened(bool ok) {
    (ok ? open_ : failed_).fetch_add(1);
    const size_t next = next_.fetch_add(1);
    if (next < clients_.size()) clients_[next]->Start();
  }
  void Failed(const std::string& why) {
    failures_.fetch_add(1);
    keel::MutexLock lock(&mu_);
    if (first_failure_.empty()) first_failure_ = why;
  }
  // Hands `fd` (of `client`) to reader thread `index` % threads.
  bool Watch(size_t index, int fd, SseClient* client) {
    epoll_event event{};
    event.events = EPOLLIN | EPOLLET;
    event.data.ptr = client;
    return epoll_ctl(readers_[index % readers_.size()], EPOLL_CTL_ADD, fd, &event) == 0;
  }
  void Delivered(uint64_t n) { delivered_.fetch_add(n, std::memory_order_relaxed); }
  void LastEventAt(uint64_t ns) { last_event_ns_.store(ns, std::memory_order_relaxed); }

  int open() const { return open_.load(); }
  int failed_to_open() const { return failed_.load(); }
  uint64_t failures() const { return failures_.load(); }
  uint64_t delivered() const { return delivered_.load(std::memory_order_relaxed); }
  uint64_t last_event_ns() const { return last_event_ns_.load(); }
  std::string first_failure() {
    keel::MutexLock lock(&mu_);
    return first_failure_;
  }

  // Stops the threads and closes every socket.
  void Stop() {
    if (stopped_) return;
    stopped_ = true;
    stopping_.store(true);
    connector_.stop();
    for (std::thread& t : threads_) t.join();
    for (auto& client : clients_) client->Close();
    for (int fd : readers_) close(fd);
  }

  Histogram MergedLatency() const {
    Histogram all;
    for (const ThreadStats& s : stats_) all.Merge(s.latency);
    return all;
  }
  // Per second of send time, counted from the earliest first second seen.
  std::vector<Histogram> MergedLatencyBySecond() const {
    uint64_t base = 0;
    for (const ThreadStats& s : stats_) {
      if (s.first_second != 0 && (base == 0 || s.first_second < base)) base = s.first_second;
    }
    std::vector<Histogram> all;
    for (const ThreadStats& s : stats_) {
      for (size_t i = 0; i < s.by_second.size(); ++i) {
        const size_t index = i + (s.first_second - base);
        if (index >= all.size()) all.resize(index + 1);
        all[index].Merge(s.by_second[i]);
      }
    }
    return all;
  }
  const std::vector<std::unique_ptr<SseClient>>& clients() const { return clients_; }

 private:
  const Config config_;
  const std::string sequence_prefix_;
  // Polls rather than blocks: over loopback the daemon's write runs the
  // receiving side too, so a reader asleep in epoll_wait is woken by the
  // daemon's sending thread once per arrival (about 12,000 times a second at
  // 10,000 connections), a cost a remote client would not put on the
  // daemon. A reader that sleeps for kIdlePoll between empty polls is not
  // waiting on the epoll set, so an arrival only marks it ready; the
  // latency recorded includes that sleep.
  void ReadLoop(size_t index);

  boost::asio::io_context connector_{1};
  // Clients are started gradually, from reader threads, and a connected
  // one leaves Asio: run() must not return while none is connecting.
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> connecting_ =
      boost::asio::make_work_guard(connector_);
  std::vector<int> readers_;  // An epoll set per reader thread.
  std::atomic<bool> stopping_{false};
  std::vector<std::unique_ptr<SseClient>> clients_;
  std::vector<ThreadStats> stats_;
  std::vector<std::thread> threads_;
  std::atomic<size_t> next_{0};
  std::atomic<int> open_{0};
  std::atomic<int> failed_{0};
  std::atomic<uint64_t> failures_{0};
  std::atomic<uint64_t> delivered_{0};
  std::atomic<uint64_t> last_event_ns_{0};
  keel::Mutex mu_;
  std::string first_failure_ ABSL_GUARDED_BY(mu_);
  bool stopped_ = false;
};

}  // namespace keel::bench

#endif  // KEEL_CMD_KEEL_BENCH_SSE_CLIENTS_H_
