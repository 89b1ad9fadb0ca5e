// `keel-bench sse`: SSE fan-out latency and memory, and SSE catch-up speed
// (issue 4, "Benchmarks"), against a `keel daemon` child process so that the
// daemon's memory is measured alone (the keel binary of --keel; by default
// the one of the same build, KeelProgramBeside):
//
//   1. fan-out: N concurrent SSE connections (default 10,000) on one stream
//      from a client with few threads (Asio connects; each reader thread
//      polls an epoll set of its own with one read buffer, so the client
//      itself stays small; SseClients::ReadLoop says why it polls); 16
//      open-loop publishers POST 100 events/s for ~20 s, each carrying its
//      publish time (steady clock, ns) in its data. Every client parses the
//      `data:` JSON of every frame, checks the sequence (in order, none
//      missing or repeated) and records publish-to-receive latency. Reported:
//      p50/p99/max latency, deliveries received vs expected, the daemon's RSS
//      (VmRSS sampled during the run and VmHWM). Targets: p99 <= 200 ms,
//      RSS <= 1 GiB.
//   2. catch-up: 1,000,000 events are published in batches through the API,
//      then one SSE client connects with after=earliest and reads them all;
//      events/s from the request to the last event. Target >= 300k/s.
//
// A lost, repeated or reordered event is an error (exit 1); a missed target
// is only printed.
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <limits>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "keel/cmd/keel-bench/bench_mode.h"
#include "keel/cmd/keel-bench/bench_process.h"
#include "keel/cmd/keel-bench/bench_report.h"
#include "keel/cmd/keel-bench/http_load.h"
#include "keel/cmd/keel/server/server.h"
#include "keel/core/mutex.h"
#include "keel/core/status_macros.h"

namespace keel::bench {
namespace {

namespace fs = std::filesystem;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

constexpr char kFanoutStream[] = "fanout";
constexpr char kCatchUpStream[] = "catchup";

uint64_t NowNanos() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now().time_since_epoch())
          .count());
}

struct SseOptions {
  std::string keel;  // The keel binary run as the daemon.
  bool quick = false;
  std::string dir;
  bool keep = false;
  int connections = 10'000;
  int client_threads = 2;
  int connect_parallel = 256;
  int publishers = 16;
  double rate = 100;
  double seconds = 20;
  uint64_t catchup_events = 1'000'000;
  uint64_t catchup_batch = 1000;
  int catchup_publishers = 4;
  uint64_t payload_bytes = 100;
  std::string sync = "always";
  int io_threads = 2;
  std::string flush;  // The daemon's --sse-flush; empty: its default.
  int sse_threads = server::DefaultSseThreads();  // The daemon's --sse-threads.
  double drain_timeout = 30;
  bool fanout = true;
  bool catchup = true;
};

template <typename T>
T Pick(const po::variables_map& vars, const char* name, bool quick, T quick_value) {
  if (quick && (vars.count(name) == 0 || vars[name].defaulted())) return quick_value;
  return vars[name].as<T>();
}

absl::StatusOr<SseOptions> OptionsFrom(const po::variables_map& vars) {
  SseOptions o;
  if (vars.count("keel")) {
    o.keel = FindProgram(vars["keel"].as<std::string>());
    if (o.keel.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--keel: '", vars["keel"].as<std::string>(), "' is not an executable program"));
    }
  } else {
    o.keel = KeelProgramBeside(SelfExecutable());
    if (o.keel.empty()) {
      return absl::InvalidArgumentError(
          "cannot find the keel binary (next to keel-bench, in the build tree's cmd/keel/ or "
          "on PATH); name it with --keel");
    }
  }
  o.quick = vars.count("quick") > 0;
  const bool q = o.quick;
  if (vars.count("dir")) o.dir = vars["dir"].as<std::string>();
  o.keep = vars.count("keep") > 0;
  o.connections = Pick<int>(vars, "sse-connections", q, 200);
  o.client_threads = vars["sse-client-threads"].as<int>();
  o.rate = vars["sse-rate"].as<double>();
  o.publishers = vars["sse-publishers"].as<int>();
  o.seconds = Pick<double>(vars, "sse-seconds", q, 3.0);
  o.catchup_events = Pick<uint64_t>(vars, "sse-catchup-events", q, 20'000);
  o.catchup_batch = vars["sse-catchup-batch"].as<uint64_t>();
  o.payload_bytes = vars["sse-payload-bytes"].as<uint64_t>();
  o.sync = vars["sse-sync"].as<std::string>();
  o.io_threads = vars["sse-io-threads"].as<int>();
  o.flush = vars["sse-flush"].as<std::string>();
  o.sse_threads = vars["sse-threads"].as<int>();
  o.drain_timeout = vars["sse-drain-timeout"].as<double>();
  const std::string cases = vars["sse-cases"].as<std::string>();
  o.fanout = cases.find("fanout") != std::string::npos;
  o.catchup = cases.find("catchup") != std::string::npos;
  if (!o.fanout && !o.catchup) return absl::InvalidArgumentError("--sse-cases: fanout, catchup");
  if (o.sync != "none" && o.sync != "always" && o.sync != "interval") {
    return absl::InvalidArgumentError("--sse-sync: none, interval or always");
  }
  if (o.connections < 1 || o.publishers < 1 || o.client_threads < 1 || o.io_threads < 1 || o.sse_threads < 1 ||
      o.rate <= 0 || o.seconds <= 0 || o.catchup_events < 1 || o.catchup_batch < 1 ||
      o.payload_bytes > 10'000) {
    return absl::InvalidArgumentError("counts and durations must be positive");
  }
  return o;
}

// ---------------------------------------------------------------- latency

// Log-linear histogram of microseconds (relative error < 0.1%).
class Histogram {
 public:
  void Add(uint64_t micros) {
    const size_t index = Index(micros);
    if (index >= counts_.size()) counts_.resize(index + 1, 0);
    ++counts_[index];
    ++count_;
    max_ = std::max(max_, micros);
  }
  void Merge(const Histogram& other) {
    if (other.counts_.size() > counts_.size()) counts_.resize(other.counts_.size(), 0);
    for (size_t i = 0; i < other.counts_.size(); ++i) counts_[i] += other.counts_[i];
    count_ += other.count_;
    max_ = std::max(max_, other.max_);
  }
  uint64_t count() const { return count_; }
  uint64_t max() const { return max_; }
  // Upper bound of the bucket holding the p-th percentile.
  uint64_t Percentile(double p) const {
    if (count_ == 0) return 0;
    const uint64_t rank = static_cast<uint64_t>(p / 100.0 * static_cast<double>(count_ - 1)) + 1;
    uint64_t seen = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen >= rank) return std::min(Upper(i), max_);
    }
    return max_;
  }

 private:
  static constexpr uint64_t kLinear = 1024;
  static size_t Index(uint64_t v) {
    if (v < 2 * kLinear) return v;
    const int shift = std::bit_width(v) - 11;  // v >> shift in [1024, 2048).
    return 2 * kLinear + (shift - 1) * kLinear + ((v >> shift) - kLinear);
  }
  static uint64_t Upper(size_t index) {
    if (index < 2 * kLinear) return index;
    const size_t shift = (index - 2 * kLinear) / kLinear + 1;
    const uint64_t mantissa = (index - 2 * kLinear) % kLinear + kLinear;
    return ((mantissa + 1) << shift) - 1;
  }
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  uint64_t max_ = 0;
};

// ---------------------------------------------------------------- SSE client

// What one client thread accumulates.
struct ThreadStats {
  Histogram latency;
  // The same by the second of the event's send time (since the first send
  // this thread saw), to tell a steady delay from a stall.
  std::vector<Histogram> by_second;
  uint64_t first_second = 0;  // 0: nothing seen yet.
  std::vector<char> scratch = std::vector<char>(256 * 1024);
};
thread_local ThreadStats* tls_stats = nullptr;

class SseClients;

// The decimal number at the start of `text` (false when there is none or
// it overflows 64 bits). By hand: it runs twice per event received.
bool LeadingNumber(absl::string_view text, uint64_t& value) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  value = 0;
  size_t at = 0;
  for (; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at) {
    const uint64_t digit = static_cast<uint64_t>(text[at] - '0');
    if (value > (kMax - digit) / 10) return false;
    value = value * 10 + digit;
  }
  return at > 0;
}

// The event's sequence: its JSON starts with `prefix` (the stream and the
// sequence's key), as the daemon writes every event.
bool SequenceOf(absl::string_view json, absl::string_view prefix, uint64_t& sequence) {
  return absl::StartsWith(json, prefix) && LeadingNumber(json.substr(prefix.size()), sequence);
}

// The offset of the first newline in `text` followed by `prefix`, or npos.
// A frame ends at a newline followed by "\n" (a blank line), and its data
// line follows a newline. A line at a time with memchr: absl's find of a
// string went through memmem, which took a third of the client's CPU.
size_t NewlineBefore(absl::string_view text, absl::string_view prefix) {
  for (size_t at = text.find('\n'); at != absl::string_view::npos; at = text.find('\n', at + 1)) {
    if (absl::StartsWith(text.substr(at + 1), prefix)) return at;
  }
  return absl::string_view::npos;
}

// The publish time `"ts":` in the event's data, in its last 64 bytes: the
// publishers write it last in the data, which the daemon writes last in
// the event (these events have no attributes).
bool PublishTimeOf(absl::string_view json, uint64_t& ts) {
  constexpr absl::string_view kKey = "\"ts\":";
  const size_t tail = json.size() > 64 ? json.size() - 64 : 0;
  const size_t at = json.substr(tail).rfind(kKey);
  return at != absl::string_view::npos && LeadingNumber(json.substr(tail + at + kKey.size()), ts);
}

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
  SseClient(SseClients& owner, net::io_context& ioc, size_t index)
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
  tcp::socket socket_;
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
  tcp::endpoint endpoint() const {
    return tcp::endpoint(net::ip::make_address_v4("127.0.0.1"), config_.port);
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
  void ReadLoop(size_t index) {
    constexpr auto kIdlePoll = std::chrono::microseconds(500);
    tls_stats = &stats_[index];
    epoll_event events[256];
    while (!stopping_.load()) {
      const int n = epoll_wait(readers_[index], events, 256, 0);
      for (int i = 0; i < n; ++i) static_cast<SseClient*>(events[i].data.ptr)->OnReadable();
      if (n == 0) std::this_thread::sleep_for(kIdlePoll);
    }
  }

  net::io_context connector_{1};
  // Clients are started gradually, from reader threads, and a connected
  // one leaves Asio: run() must not return while none is connecting.
  net::executor_work_guard<net::io_context::executor_type> connecting_ =
      net::make_work_guard(connector_);
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

void SseClient::Start() {
  const SseClients::Config& c = owner_.config();
  request_ = absl::StrCat("GET /v1/streams/", c.stream, "/sse",
                          c.after.empty() ? "" : absl::StrCat("?after=", c.after),
                          " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n");
  socket_.async_connect(owner_.endpoint(), [this](const boost::system::error_code& ec) {
    if (ec) {
      Fail(absl::StrCat("connect: ", ec.message()));
      return;
    }
    boost::system::error_code ignored;
    socket_.non_blocking(true, ignored);
    net::async_write(socket_, net::buffer(request_),
                     [this](const boost::system::error_code& ec, size_t) {
                       if (ec) return Fail(absl::StrCat("write: ", ec.message()));
                       Attach();
                     });
  });
}

// The request is out: the rest of the connection is reading.
void SseClient::Attach() {
  boost::system::error_code ec;
  fd_ = socket_.release(ec);
  if (ec) return Fail(absl::StrCat("release: ", ec.message()));
  if (!owner_.Watch(index_, fd_, this)) Fail(absl::StrCat("epoll_ctl: ", strerror(errno)));
}

void SseClient::OnReadable() {
  if (failed_) return;
  std::vector<char>& scratch = tls_stats->scratch;
  while (true) {
    const ssize_t n = recv(fd_, scratch.data(), scratch.size(), 0);
    // Edge-triggered: an interrupted read must be retried, as no new edge
    // comes for data already waiting.
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) return Fail(n == 0 ? "the server closed the stream" : strerror(errno));
    Consume(scratch.data(), static_cast<size_t>(n), NowNanos());
    if (failed_ || static_cast<size_t>(n) < scratch.size()) return;
  }
}

void SseClient::Consume(const char* data, size_t size, uint64_t now_ns) {
  // Work on the pending tail plus the new bytes.
  absl::string_view input(data, size);
  std::string joined;
  if (!pending_.empty()) {
    joined = std::move(pending_);
    joined.append(data, size);
    pending_.clear();
    input = joined;
  }
  if (!head_done_) {
    const size_t end = input.find("\r\n\r\n");
    if (end == absl::string_view::npos) {
      pending_.assign(input.data(), input.size());
      return;
    }
    if (input.substr(0, 12) != "HTTP/1.1 200") {
      Fail(absl::StrCat("SSE request answered ", input.substr(0, std::min<size_t>(end, 300))));
      return;
    }
    head_done_ = true;
    owner_.Opened(true);
    input.remove_prefix(end + 4);
  }
  uint64_t delivered = 0;
  while (true) {
    const size_t end = NewlineBefore(input, "\n");
    if (end == absl::string_view::npos) break;
    const absl::string_view frame = input.substr(0, end + 1);
    input.remove_prefix(end + 2);
    if (Frame(frame, now_ns)) ++delivered;
    if (failed_) return;
  }
  if (delivered > 0) {
    owner_.Delivered(delivered);
    owner_.LastEventAt(now_ns);
  }
  pending_.assign(input.data(), input.size());
}

// Handles one frame; returns whether it was an event.
bool SseClient::Frame(absl::string_view frame, uint64_t now_ns) {
  const size_t data_at = NewlineBefore(frame, "data: ");
  if (data_at == absl::string_view::npos) return false;  // retry:, : keepalive
  const absl::string_view data = frame.substr(data_at + 7);
  if (frame.substr(0, 4) != "id: ") {
    Fail(absl::StrCat("unexpected frame: ", frame.substr(0, 300)));
    return false;
  }
  // The event JSON: {"stream":"S","sequence":N,...,"data":{"n":I,"pad":P,"ts":T}}.
  // The sequence is read where the daemon puts it and the publish time near
  // the end: the client shares the machine with the daemon it measures, and
  // searching every frame whole took a quarter of the client's CPU.
  uint64_t sequence = 0;
  if (!SequenceOf(data, owner_.sequence_prefix(), sequence)) {
    Fail(absl::StrCat("no sequence in ", data.substr(0, 300)));
    return false;
  }
  if (sequence != last_sequence_ + 1) {
    Fail(absl::StrCat("connection ", index_, ": sequence ", sequence, " after ", last_sequence_));
    return false;
  }
  last_sequence_ = sequence;
  ++received_;
  if (owner_.config().record_latency) {
    uint64_t published_ns = 0;
    if (!PublishTimeOf(data, published_ns)) {
      Fail(absl::StrCat("no ts in ", data.substr(0, 300)));
      return false;
    }
    const uint64_t micros = now_ns > published_ns ? (now_ns - published_ns) / 1000 : 0;
    tls_stats->latency.Add(micros);
    const uint64_t second = published_ns / 1'000'000'000;
    if (tls_stats->first_second == 0) tls_stats->first_second = second;
    const uint64_t index = second > tls_stats->first_second ? second - tls_stats->first_second : 0;
    if (index >= tls_stats->by_second.size()) tls_stats->by_second.resize(index + 1);
    tls_stats->by_second[index].Add(micros);
  }
  return true;
}

void SseClient::Fail(const std::string& why) {
  if (failed_) return;
  failed_ = true;
  if (!head_done_) owner_.Opened(false);
  owner_.Failed(why);
  Close();
}

// ---------------------------------------------------------------- daemon

struct Daemon {
  ChildProcess process;
  uint16_t port = 0;
  std::string command;
};

absl::StatusOr<Daemon> StartDaemon(const SseOptions& o, const std::string& root) {
  const std::string port_file = (fs::path(root) / "daemon.port").string();
  std::vector<std::string> argv = {
      o.keel,        "daemon",  "--listen",     "127.0.0.1:0",
      "--port-file", port_file, "--data-dir",   (fs::path(root) / "data").string(),
      "--sync",      o.sync,    "--io-threads", absl::StrCat(o.io_threads),
      "--sse-threads", absl::StrCat(o.sse_threads), "--log-level", "warn"};
  if (!o.flush.empty()) argv.insert(argv.end(), {"--sse-flush", o.flush});
  Daemon daemon;
  daemon.command = absl::StrJoin(argv, " ");
  KEEL_ASSIGN_OR_RETURN(daemon.process,
                        ChildProcess::Start(argv, (fs::path(root) / "daemon.log").string()));
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (true) {
    std::ifstream in(port_file);
    uint32_t port = 0;
    if (in >> port && port > 0) {
      daemon.port = static_cast<uint16_t>(port);
      break;
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("keel daemon did not report its port; see ", root, "/daemon.log"));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  KEEL_RETURN_IF_ERROR(WaitForListener(daemon.port, absl::Seconds(10)));
  return daemon;
}

// ---------------------------------------------------------------- cases

struct FanoutResult {
  int connections = 0;
  uint64_t events = 0;
  uint64_t expected = 0;
  uint64_t received = 0;
  uint64_t incomplete_clients = 0;
  Histogram latency;
  std::vector<Histogram> latency_by_second;
  double publish_seconds = 0;
  double max_publish_lag_seconds = 0;
  double achieved_rate = 0;
  double connect_seconds = 0;
  MemoryUse daemon_before;      // After the connections opened, before publishing.
  uint64_t daemon_rss_max = 0;  // Sampled VmRSS during the run.
  MemoryUse daemon_after;
  MemoryUse client;
};

absl::StatusOr<FanoutResult> RunFanout(const SseOptions& o, Daemon& daemon, std::ostream& out) {
  FanoutResult result;
  SseClients::Config config;
  config.port = daemon.port;
  config.stream = kFanoutStream;
  config.connections = o.connections;
  config.threads = o.client_threads;
  config.connect_parallel = o.connect_parallel;
  config.record_latency = true;
  SseClients clients(config);
  const pid_t pid = daemon.process.pid();
  auto sample = [&] {
    result.daemon_rss_max = std::max(result.daemon_rss_max, ProcessMemory(pid).rss);
  };

  out << "  opening " << Thousands(o.connections) << " SSE connections ... " << std::flush;
  Stopwatch connect_watch;
  clients.Start();
  const absl::Time connect_deadline = absl::Now() + absl::Seconds(60 + o.connections / 200);
  while (clients.open() + clients.failed_to_open() < o.connections) {
    if (absl::Now() >= connect_deadline) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  result.connect_seconds = connect_watch.Seconds();
  if (clients.open() != o.connections) {
    return absl::UnavailableError(absl::StrCat(
        clients.open(), " of ", o.connections, " SSE connections opened after ",
        Duration(result.connect_seconds), "; first failure: ", clients.first_failure()));
  }
  result.connections = clients.open();
  sample();
  result.daemon_before = ProcessMemory(pid);
  out << Duration(result.connect_seconds) << "; daemon RSS " << Bytes(result.daemon_before.rss)
      << "\n"
      << std::flush;

  // The publishers: open loop. Event i is due at start + i / rate and is
  // sent by thread i % publishers on its own keep-alive connection, so a
  // slow publish delays only that thread's next turn, not the schedule;
  // each event carries the time it was actually sent.
  const uint64_t events = static_cast<uint64_t>(o.rate * o.seconds + 0.5);
  result.events = events;
  result.expected = events * static_cast<uint64_t>(o.connections);
  const std::string target = absl::StrCat("/v1/streams/", kFanoutStream, "/events");
  const std::string pad(o.payload_bytes, 'p');
  out << "  publishing " << Thousands(events) << " events at " << o.rate << "/s from "
      << o.publishers << " open-loop publisher connections ... " << std::flush;
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
      absl::Status status = publisher.Connect("127.0.0.1", daemon.port);
      for (uint64_t i = static_cast<uint64_t>(p); status.ok() && i < events;
           i += static_cast<uint64_t>(o.publishers)) {
        const SteadyClock::time_point due =
            start +
            std::chrono::nanoseconds(static_cast<int64_t>(1e9 * static_cast<double>(i) / o.rate));
        std::this_thread::sleep_until(due);
        const uint64_t sent = NowNanos();
        if (i == events - 1) last_sent_ns.store(sent);
        const uint64_t due_ns = static_cast<uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(due.time_since_epoch()).count());
        if (sent > due_ns) {
          uint64_t lag = sent - due_ns, seen = max_lag_ns.load();
          while (lag > seen && !max_lag_ns.compare_exchange_weak(seen, lag)) {
          }
        }
        // The send time comes last, where the clients look for it first.
        const std::string body = absl::StrCat("{\"type\":\"bench.sse\",\"data\":{\"n\":", i,
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
    sample();
    absl::SleepFor(absl::Milliseconds(100));
  }
  for (std::thread& t : publishers) t.join();
  KEEL_RETURN_IF_ERROR(publish_error);
  result.publish_seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  result.max_publish_lag_seconds = static_cast<double>(max_lag_ns.load()) / 1e9;
  const uint64_t start_ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(start.time_since_epoch()).count());
  // Sends per second over the schedule (event 0 at start, event n-1 last).
  result.achieved_rate = events > 1 && last_sent_ns.load() > start_ns
                             ? static_cast<double>(events - 1) /
                                   (static_cast<double>(last_sent_ns.load() - start_ns) / 1e9)
                             : o.rate;
  out << Duration(result.publish_seconds) << " (achieved "
      << absl::StrFormat("%.1f", result.achieved_rate) << " events/s; latest send "
      << Duration(result.max_publish_lag_seconds) << " behind schedule)\n"
      << std::flush;

  // Wait for every delivery (or for progress to stop).
  out << "  draining ... " << std::flush;
  uint64_t last_delivered = clients.delivered();
  absl::Time last_progress = absl::Now();
  const absl::Time drain_start = absl::Now();
  while (clients.delivered() < result.expected && clients.failures() == 0) {
    sample();
    absl::SleepFor(absl::Milliseconds(50));
    const uint64_t now = clients.delivered();
    if (now != last_delivered) {
      last_delivered = now;
      last_progress = absl::Now();
    } else if (absl::Now() - last_progress > absl::Seconds(o.drain_timeout)) {
      break;
    }
  }
  out << Duration(absl::ToDoubleSeconds(absl::Now() - drain_start)) << "\n" << std::flush;
  sample();
  result.daemon_after = ProcessMemory(pid);
  result.client = ProcessMemory(0);
  clients.Stop();
  result.received = clients.delivered();
  for (const auto& client : clients.clients()) {
    if (client->received() != events) ++result.incomplete_clients;
  }
  result.latency = clients.MergedLatency();
  result.latency_by_second = clients.MergedLatencyBySecond();
  if (clients.failures() > 0) {
    return absl::InternalError(absl::StrCat(
        clients.failures(), " SSE client(s) failed; first: ", clients.first_failure()));
  }
  return result;
}

struct CatchUpResult {
  uint64_t events = 0;
  double publish_seconds = 0;
  double read_seconds = 0;
  uint64_t received = 0;
};

absl::StatusOr<CatchUpResult> RunCatchUp(const SseOptions& o, Daemon& daemon, std::ostream& out) {
  CatchUpResult result;
  result.events = o.catchup_events;
  // Preload through the API, in batches.
  const uint64_t requests = (o.catchup_events + o.catchup_batch - 1) / o.catchup_batch;
  const uint64_t batch = o.catchup_events / requests;
  if (batch * requests != o.catchup_events) {
    return absl::InvalidArgumentError("--sse-catchup-events must be a multiple of the batch");
  }
  std::string body = "[";
  const std::string pad(o.payload_bytes, 'c');
  for (uint64_t i = 0; i < batch; ++i) {
    if (i > 0) body += ",";
    absl::StrAppend(&body, "{\"type\":\"bench.catchup\",\"data\":\"", pad, "\"}");
  }
  body += "]";
  LoadOptions load;
  load.port = daemon.port;
  load.connections = static_cast<int>(std::min<uint64_t>(o.catchup_publishers, requests));
  load.threads = 1;
  load.request =
      JsonPostRequest("127.0.0.1", absl::StrCat("/v1/streams/", kCatchUpStream, "/events"), body);
  load.total_requests = requests;
  out << "  publishing " << Thousands(o.catchup_events) << " events in batches of " << batch
      << " ... " << std::flush;
  KEEL_ASSIGN_OR_RETURN(LoadResult loaded, RunHttpLoad(load));
  if (loaded.good != requests || loaded.bad > 0 || loaded.io_errors > 0) {
    return absl::InternalError(absl::StrCat("catch-up preload: ", loaded.good, " of ", requests,
                                            " batches acknowledged; ", loaded.first_bad_response));
  }
  result.publish_seconds = loaded.seconds;
  out << Duration(loaded.seconds) << " ("
      << EventsPerSecond(static_cast<double>(o.catchup_events) / loaded.seconds) << ")\n"
      << "  reading them over one SSE connection from earliest ... " << std::flush;

  SseClients::Config config;
  config.port = daemon.port;
  config.stream = kCatchUpStream;
  config.after = "earliest";
  config.connections = 1;
  config.threads = 1;
  config.record_latency = false;
  SseClients client(config);
  const uint64_t start_ns = NowNanos();
  client.Start();
  uint64_t last = 0;
  absl::Time last_progress = absl::Now();
  while (client.delivered() < o.catchup_events && client.failures() == 0) {
    absl::SleepFor(absl::Milliseconds(5));
    const uint64_t now = client.delivered();
    if (now != last) {
      last = now;
      last_progress = absl::Now();
    } else if (absl::Now() - last_progress > absl::Seconds(o.drain_timeout)) {
      break;
    }
  }
  result.read_seconds = static_cast<double>(client.last_event_ns() - start_ns) / 1e9;
  client.Stop();
  result.received = client.delivered();
  if (client.failures() > 0) {
    return absl::InternalError(absl::StrCat("catch-up client failed: ", client.first_failure()));
  }
  out << Duration(result.read_seconds) << "\n" << std::flush;
  return result;
}

// ---------------------------------------------------------------- the mode

class SseBench final : public BenchMode {
 public:
  absl::string_view name() const override { return "sse"; }
  absl::string_view summary() const override {
    return "SSE fan-out (10k connections, 100 ev/s: latency, daemon RSS) and 1M-event catch-up";
  }
  void AddOptions(po::options_description& options) const override {
    options.add_options()("sse-connections", po::value<int>()->default_value(10'000),
                          "concurrent SSE connections of the fan-out case (--quick: 200)")(
        "sse-client-threads", po::value<int>()->default_value(2), "threads of the SSE clients")(
        "sse-rate", po::value<double>()->default_value(100), "fan-out publishes per second")(
        "sse-publishers", po::value<int>()->default_value(16),
        "publisher threads (one connection each) sharing the open-loop schedule")(
        "sse-seconds", po::value<double>()->default_value(20),
        "fan-out publishing time (--quick: 3)")("sse-payload-bytes",
                                                po::value<uint64_t>()->default_value(100),
                                                "padding string in each event's data")(
        "sse-catchup-events", po::value<uint64_t>()->default_value(1'000'000),
        "events the catch-up reader is behind (--quick: 20000)")(
        "sse-catchup-batch", po::value<uint64_t>()->default_value(1000),
        "events per publish request of the catch-up preload")(
        "sse-sync", po::value<std::string>()->default_value("always"),
        "the daemon's --sync (the fan-out rate is low; the preload batches)")(
        "sse-io-threads", po::value<int>()->default_value(2), "the daemon's --io-threads")(
        "sse-flush", po::value<std::string>()->default_value(""),
        "the daemon's --sse-flush (default: the daemon's default)")(
        "sse-threads", po::value<int>()->default_value(server::DefaultSseThreads()),
        "the daemon's --sse-threads")(
        "sse-drain-timeout", po::value<double>()->default_value(30),
        "seconds without progress after which missing deliveries count as lost")(
        "sse-cases", po::value<std::string>()->default_value("fanout,catchup"),
        "cases to run: fanout, catchup")(
        "keel", po::value<std::string>(),
        "the keel binary to run as the daemon (default: the keel of the same build: next to "
        "keel-bench, else the build tree's cmd/keel/keel, else keel on PATH)")
        // The generic flags every mode has (bench_mode.h).
        ("quick", "a small smoke run for CI; figures are not meaningful")(
            "dir", po::value<std::string>(),
            "parent directory for the stores (default: the system temp dir)")(
            "keep", "keep the stores instead of removing them");
  }

  int Run(const po::variables_map& vars, BenchIo& io) const override {
    absl::StatusOr<SseOptions> options = OptionsFrom(vars);
    if (!options.ok()) {
      io.err << "keel-bench sse: " << options.status().message() << "\n";
      return kExitUsage;
    }
    absl::Status status = RunAll(*options, io.out);
    if (!status.ok()) {
      io.err << "keel-bench sse: " << status << "\n";
      return kExitFailure;
    }
    return kExitOk;
  }

 private:
  absl::Status RunAll(SseOptions o, std::ostream& out) const;
};

absl::Status SseBench::RunAll(SseOptions o, std::ostream& out) const {
  absl::StatusOr<std::unique_ptr<ScratchDir>> scratch =
      ScratchDir::Create(o.dir, "keel-bench-sse", o.keep);
  if (!scratch.ok()) return scratch.status();
  const std::string root = (*scratch)->path();

  // Each connection needs a descriptor here and one in the daemon (which
  // inherits this limit).
  const uint64_t wanted = static_cast<uint64_t>(o.connections) + 512;
  const uint64_t limit = RaiseOpenFileLimit(wanted);
  std::string limit_note = absl::StrCat("RLIMIT_NOFILE ", limit);
  if (o.fanout && limit < wanted) {
    const int fit = static_cast<int>(limit > 1024 ? limit - 512 : limit / 2);
    out << "WARNING: cannot raise RLIMIT_NOFILE to " << wanted << " (hard limit " << limit
        << "); the fan-out runs " << fit << " connections instead of " << o.connections << "\n";
    limit_note += absl::StrCat(" (wanted ", wanted, "; connections reduced to ", fit, ")");
    o.connections = fit;
  }

  KEEL_ASSIGN_OR_RETURN(Daemon daemon, StartDaemon(o, root));
  out << "keel-bench sse" << (o.quick ? " --quick (smoke run: figures are not meaningful)" : "")
      << "\n  daemon: child process, pid " << daemon.process.pid() << ": " << daemon.command
      << "\n  clients: " << o.client_threads << " reader thread(s) in this process; " << limit_note
      << "\n  machine: " << std::thread::hardware_concurrency()
      << " CPUs, shared by the daemon, the clients and the publisher\n";

  ResultTable table;
  bool lost = false;
  if (o.fanout) {
    out << "\n[1] fan-out: " << Thousands(o.connections) << " SSE connections on one stream, "
        << o.rate << " events/s for " << o.seconds << " s\n"
        << std::flush;
    KEEL_ASSIGN_OR_RETURN(FanoutResult f, RunFanout(o, daemon, out));
    const double ms = 1e-3;
    out << absl::StrFormat(
        "  deliveries %s of %s (%s events x %s connections)%s; latency p50 %.1f ms, p99 %.1f "
        "ms, max %.1f ms\n"
        "  daemon RSS: %s before publishing, %s at the end, max sampled %s, peak (VmHWM) %s; "
        "client process RSS %s (not counted)\n",
        Thousands(f.received), Thousands(f.expected), Thousands(f.events), Thousands(f.connections),
        f.received == f.expected ? ""
                                 : absl::StrCat(" -- LOST ", Thousands(f.expected - f.received),
                                                " (", f.incomplete_clients, " clients incomplete)"),
        f.latency.Percentile(50) * ms, f.latency.Percentile(99) * ms, f.latency.max() * ms,
        Bytes(f.daemon_before.rss), Bytes(f.daemon_after.rss), Bytes(f.daemon_rss_max),
        Bytes(f.daemon_after.peak), Bytes(f.client.rss));
    out << "  p50/p99 ms by second of send time:";
    for (const Histogram& second : f.latency_by_second) {
      out << absl::StrFormat(" %.0f/%.0f", second.Percentile(50) * ms, second.Percentile(99) * ms);
    }
    out << "\n";
    lost = f.received != f.expected;
    const std::string conns = absl::StrCat(Thousands(f.connections), " conn, ", o.rate, " ev/s");
    table.Add(ResultRow{absl::StrCat("fan-out p50 latency, ", conns),
                        absl::StrFormat("%.1f ms", f.latency.Percentile(50) * ms), "-", 0, "",
                        ResultRow::Goal::kNone, 0});
    table.Add(ResultRow{absl::StrCat("fan-out p99 latency, ", conns),
                        absl::StrFormat("%.1f ms", f.latency.Percentile(99) * ms), "-",
                        std::max(f.latency.Percentile(99) * ms, 0.001), " ms",
                        ResultRow::Goal::kAtMost, 200});
    table.Add(ResultRow{absl::StrCat("fan-out max latency, ", conns),
                        absl::StrFormat("%.1f ms", f.latency.max() * ms), "-", 0, "",
                        ResultRow::Goal::kNone, 0});
    const double achieved = f.achieved_rate;
    table.Add(ResultRow{"fan-out publish rate achieved", absl::StrFormat("%.1f ev/s", achieved),
                        absl::StrFormat("scheduled %.0f ev/s", o.rate), achieved / o.rate, "x",
                        ResultRow::Goal::kAtLeast, 0.95});
    table.Add(ResultRow{"fan-out deliveries (all expected)",
                        absl::StrCat(Thousands(f.received), " of ", Thousands(f.expected)), "-", 0,
                        "", ResultRow::Goal::kNone, 0});
    const uint64_t peak = std::max(f.daemon_after.peak, f.daemon_rss_max);
    table.Add(ResultRow{"fan-out daemon RSS (peak, VmHWM)", Bytes(peak), "-",
                        std::max(static_cast<double>(peak) / (1 << 30), 0.001), " GiB",
                        ResultRow::Goal::kAtMost, 1.0});
  }
  if (o.catchup) {
    out << "\n[2] catch-up: one SSE client " << Thousands(o.catchup_events)
        << " events behind (after=earliest)\n"
        << std::flush;
    KEEL_ASSIGN_OR_RETURN(CatchUpResult c, RunCatchUp(o, daemon, out));
    const double rate = static_cast<double>(c.received) / c.read_seconds;
    out << "  received " << Thousands(c.received) << " of " << Thousands(c.events) << " in order"
        << (c.received == c.events ? "" : " -- LOST some") << "\n";
    lost = lost || c.received != c.events;
    table.Add(ResultRow{absl::StrCat("catch-up ", Thousands(c.events), " events, 1 client"),
                        EventsPerSecond(rate), "-", std::max(rate / 1000, 0.001), "k ev/s",
                        ResultRow::Goal::kAtLeast, 300});
  }
  const MemoryUse daemon_end = ProcessMemory(daemon.process.pid());
  const int exit_code = daemon.process.Stop(SIGTERM, absl::Seconds(30));
  out << "  daemon stopped (exit " << exit_code << "); final RSS " << Bytes(daemon_end.rss)
      << ", peak " << Bytes(daemon_end.peak) << "\n\n";
  const int misses = table.Print(out);
  out << "\nlatency = publisher's steady-clock time in the event data to the client's read of "
         "the frame; RSS is the daemon process alone. "
      << (misses == 0 ? "All targets met." : absl::StrCat(misses, " target(s) missed."))
      << " Targets are printed, not asserted.\n";
  if (lost) return absl::InternalError("events were lost (see above)");
  if (exit_code != 0) {
    return absl::InternalError(
        absl::StrCat("keel daemon exited ", exit_code, "; see ", root, "/daemon.log"));
  }
  return absl::OkStatus();
}

}  // namespace

std::unique_ptr<BenchMode> NewSseBench() { return std::make_unique<SseBench>(); }

}  // namespace keel::bench
