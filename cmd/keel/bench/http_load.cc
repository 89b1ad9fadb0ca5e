#include "cmd/keel/bench/http_load.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/mutex.h"

namespace keel::cli::bench {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;

// Parses a response head at the start of `data`. Returns the number of bytes
// of the whole response (head + body) once it is complete, 0 while more
// bytes are needed, -1 when it is malformed. Sets `status`.
long ParseResponse(const char* data, size_t size, int& status) {
  const char* end = static_cast<const char*>(memmem(data, size, "\r\n\r\n", 4));
  if (end == nullptr) return size > 64 * 1024 ? -1 : 0;
  const size_t head = static_cast<size_t>(end - data) + 4;
  if (size < 12 || std::memcmp(data, "HTTP/1.", 7) != 0) return -1;
  status = (data[9] - '0') * 100 + (data[10] - '0') * 10 + (data[11] - '0');
  // Content-Length (Beast writes it in this case; accept any case).
  size_t body = 0;
  absl::string_view headers(data, head);
  size_t at = 0;
  while ((at = headers.find("\r\n", at)) != absl::string_view::npos) {
    at += 2;
    if (headers.size() - at > 15 &&
        absl::EqualsIgnoreCase(headers.substr(at, 15), "content-length:")) {
      size_t value_end = headers.find("\r\n", at);
      absl::string_view value = absl::StripAsciiWhitespace(
          headers.substr(at + 15, value_end - at - 15));
      if (!absl::SimpleAtoi(value, &body)) return -1;
      break;
    }
  }
  if (size < head + body) return 0;
  return static_cast<long>(head + body);
}

class Load;

class Connection {
 public:
  Connection(Load& load, net::io_context& ioc) : load_(load), socket_(ioc) {}
  void Start(const tcp::endpoint& endpoint);

 private:
  void Send();
  void Read();
  void OnBytes(size_t n);
  void Fail(const boost::system::error_code& ec);

  Load& load_;
  tcp::socket socket_;
  std::vector<char> buffer_ = std::vector<char>(64 * 1024);
  size_t filled_ = 0;
};

class Load {
 public:
  explicit Load(const LoadOptions& options) : options(options) {}

  const LoadOptions& options;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> tickets{0};  // Requests claimed (counted runs).
  std::atomic<uint64_t> responses{0};
  std::atomic<uint64_t> good{0};
  std::atomic<uint64_t> bad{0};
  std::atomic<uint64_t> io_errors{0};
  keel::Mutex mu;
  std::map<int, uint64_t> statuses ABSL_GUARDED_BY(mu);
  std::string first_bad ABSL_GUARDED_BY(mu);
  std::string first_error ABSL_GUARDED_BY(mu);

  // Whether a connection may send another request.
  bool Claim() {
    if (stop.load(std::memory_order_relaxed)) return false;
    if (options.total_requests == 0) return true;
    return tickets.fetch_add(1, std::memory_order_relaxed) < options.total_requests;
  }

  void Count(int status, const char* data, size_t size) {
    responses.fetch_add(1, std::memory_order_relaxed);
    if (status == options.expected_status) {
      good.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    bad.fetch_add(1, std::memory_order_relaxed);
    keel::MutexLock lock(&mu);
    ++statuses[status];
    if (first_bad.empty()) first_bad.assign(data, std::min<size_t>(size, 2000));
  }
};

void Connection::Start(const tcp::endpoint& endpoint) {
  socket_.async_connect(endpoint, [this](const boost::system::error_code& ec) {
    if (ec) return Fail(ec);
    socket_.set_option(tcp::no_delay(true));
    socket_.non_blocking(true);  // Read() never blocks the client thread.
    Send();
  });
}

void Connection::Send() {
  if (!load_.Claim()) {
    boost::system::error_code ignored;
    socket_.close(ignored);
    return;
  }
  net::async_write(socket_, net::buffer(load_.options.request),
                   [this](const boost::system::error_code& ec, size_t) {
                     if (ec) return Fail(ec);
                     Read();
                   });
}

// Waits for the socket to become readable, then reads what is there: an
// immediate read would almost always find nothing yet (the server has just
// been sent the request) and cost a system call per response, which
// redis-benchmark's event loop does not pay either.
void Connection::Read() {
  socket_.async_wait(tcp::socket::wait_read, [this](const boost::system::error_code& ec) {
    if (ec) return Fail(ec);
    if (filled_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);
    boost::system::error_code read_ec;
    const size_t n =
        socket_.read_some(net::buffer(buffer_.data() + filled_, buffer_.size() - filled_), read_ec);
    if (read_ec == net::error::would_block) return Read();
    if (read_ec) return Fail(read_ec);
    OnBytes(n);
  });
}

void Connection::OnBytes(size_t n) {
  filled_ += n;
  int status = 0;
  const long used = ParseResponse(buffer_.data(), filled_, status);
  if (used < 0) return Fail(boost::asio::error::invalid_argument);
  if (used == 0) return Read();
  load_.Count(status, buffer_.data(), static_cast<size_t>(used));
  std::memmove(buffer_.data(), buffer_.data() + used, filled_ - static_cast<size_t>(used));
  filled_ -= static_cast<size_t>(used);
  Send();
}

void Connection::Fail(const boost::system::error_code& ec) {
  load_.io_errors.fetch_add(1, std::memory_order_relaxed);
  {
    keel::MutexLock lock(&load_.mu);
    if (load_.first_error.empty()) load_.first_error = ec.message();
  }
  boost::system::error_code ignored;
  socket_.close(ignored);
}

}  // namespace

std::string JsonPostRequest(absl::string_view host, absl::string_view target,
                            absl::string_view body) {
  return absl::StrCat("POST ", target, " HTTP/1.1\r\nHost: ", host,
                      "\r\nContent-Type: application/json\r\nContent-Length: ", body.size(),
                      "\r\n\r\n", body);
}

absl::StatusOr<LoadResult> RunHttpLoad(const LoadOptions& options) {
  if (options.connections < 1 || options.threads < 1 || options.request.empty()) {
    return absl::InvalidArgumentError("load: connections, threads and request are required");
  }
  boost::system::error_code ec;
  const tcp::endpoint endpoint(net::ip::make_address(options.host, ec), options.port);
  if (ec) return absl::InvalidArgumentError(absl::StrCat("load: bad host ", options.host));
  Load load(options);
  net::io_context ioc(options.threads);
  std::vector<std::unique_ptr<Connection>> connections;
  for (int i = 0; i < options.connections; ++i) {
    connections.push_back(std::make_unique<Connection>(load, ioc));
    connections.back()->Start(endpoint);
  }
  using Clock = std::chrono::steady_clock;
  const Clock::time_point begin = Clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < options.threads; ++i) threads.emplace_back([&ioc] { ioc.run(); });

  LoadResult result;
  if (options.total_requests == 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(options.warmup_seconds));
    const uint64_t responses0 = load.responses.load();
    const uint64_t good0 = load.good.load();
    const Clock::time_point t0 = Clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(options.seconds));
    const uint64_t responses1 = load.responses.load();
    const uint64_t good1 = load.good.load();
    const Clock::time_point t1 = Clock::now();
    load.stop.store(true);
    result.responses = responses1 - responses0;
    result.good = good1 - good0;
    result.seconds = std::chrono::duration<double>(t1 - t0).count();
  }
  for (std::thread& thread : threads) thread.join();
  if (options.total_requests != 0) {
    result.seconds = std::chrono::duration<double>(Clock::now() - begin).count();
    result.responses = load.responses.load();
    result.good = load.good.load();
  }
  result.bad = load.bad.load();
  result.io_errors = load.io_errors.load();
  keel::MutexLock lock(&load.mu);
  result.first_bad_response = load.first_bad;
  result.statuses = load.statuses;
  if (load.good.load() > 0) result.statuses[options.expected_status] = load.good.load();
  if (result.io_errors > 0 && result.first_bad_response.empty()) {
    result.first_bad_response = absl::StrCat("I/O error: ", load.first_error);
  }
  return result;
}

struct BlockingHttpClient::Impl {
  net::io_context ioc;
  tcp::socket socket{ioc};
  std::string buffer;
};

BlockingHttpClient::BlockingHttpClient() : impl_(std::make_unique<Impl>()) {}
BlockingHttpClient::~BlockingHttpClient() = default;

absl::Status BlockingHttpClient::Connect(const std::string& host, uint16_t port) {
  boost::system::error_code ec;
  const tcp::endpoint endpoint(net::ip::make_address(host, ec), port);
  if (!ec) impl_->socket.connect(endpoint, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("connect ", host, ":", port, ": ", ec.message()));
  impl_->socket.set_option(tcp::no_delay(true), ec);
  return absl::OkStatus();
}

absl::StatusOr<BlockingHttpClient::Response> BlockingHttpClient::RoundTrip(
    const std::string& request) {
  boost::system::error_code ec;
  net::write(impl_->socket, net::buffer(request), ec);
  if (ec) return absl::UnavailableError(absl::StrCat("write: ", ec.message()));
  std::string& buffer = impl_->buffer;
  char chunk[16 * 1024];
  while (true) {
    int status = 0;
    const long used = ParseResponse(buffer.data(), buffer.size(), status);
    if (used < 0) return absl::InternalError("malformed HTTP response");
    if (used > 0) {
      Response response;
      response.status = status;
      const size_t head = buffer.find("\r\n\r\n") + 4;
      response.body = buffer.substr(head, static_cast<size_t>(used) - head);
      buffer.erase(0, static_cast<size_t>(used));
      return response;
    }
    const size_t n = impl_->socket.read_some(net::buffer(chunk), ec);
    if (ec) return absl::UnavailableError(absl::StrCat("read: ", ec.message()));
    buffer.append(chunk, n);
  }
}

}  // namespace keel::cli::bench
