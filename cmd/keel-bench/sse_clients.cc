#include "keel/cmd/keel-bench/sse_clients.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace keel::bench {
namespace {

namespace net = boost::asio;

thread_local ThreadStats* tls_stats = nullptr;

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

}  // namespace

uint64_t SteadyNowNanos() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

void SseClients::ReadLoop(size_t index) {
  constexpr auto kIdlePoll = std::chrono::microseconds(500);
  tls_stats = &stats_[index];
  epoll_event events[256];
  while (!stopping_.load()) {
    const int n = epoll_wait(readers_[index], events, 256, 0);
    for (int i = 0; i < n; ++i) static_cast<SseClient*>(events[i].data.ptr)->OnReadable();
    if (n == 0) std::this_thread::sleep_for(kIdlePoll);
  }
}

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
    Consume(scratch.data(), static_cast<size_t>(n), SteadyNowNanos());
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

}  // namespace keel::bench
