// An HTTP/1.1 load generator for `keel-bench http` and `keel-bench sse`.
//
// RunHttpLoad opens `connections` keep-alive connections, served by
// `threads` client threads (an epoll loop each), and on each sends one fixed request, reads the
// response (status line, Content-Length, body) and sends the next: one
// request in flight per connection, as redis-benchmark does without -P. The
// request bytes are prepared once, so the client costs little CPU per
// request: it parses only what it needs (status code and Content-Length).
//
// It runs either for a time window (after a warm-up; the rate counts the
// responses completed inside the window) or for a fixed number of requests
// (the rate counts all of them).
//
// BlockingHttpClient is a one-connection synchronous client for the few
// control requests of a benchmark (e.g. a paced publisher).
//
// Thread safety: RunHttpLoad is safe anywhere; a BlockingHttpClient is used
// by one thread.
#ifndef KEEL_CMD_KEEL_BENCH_HTTP_LOAD_H_
#define KEEL_CMD_KEEL_BENCH_HTTP_LOAD_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace keel::bench {

// A complete HTTP/1.1 POST request with a JSON body, keep-alive.
std::string JsonPostRequest(absl::string_view host, absl::string_view target,
                            absl::string_view body);

struct LoadOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  int connections = 50;
  int threads = 1;
  std::string request;        // Sent over and over (JsonPostRequest).
  int expected_status = 201;  // Responses with another status are counted as bad.
  // Time-boxed run: warm up, then count responses for `seconds`.
  double warmup_seconds = 1;
  double seconds = 5;
  // When non-zero: send exactly this many requests (all counted); the time
  // fields are ignored.
  uint64_t total_requests = 0;
};

struct LoadResult {
  uint64_t responses = 0;  // Counted responses (in the window, or all).
  uint64_t good = 0;       // ... with the expected status.
  double seconds = 0;      // Length of the counted period.
  uint64_t bad = 0;        // Responses with another status (whole run).
  uint64_t io_errors = 0;  // Connections that failed (whole run).
  std::map<int, uint64_t> statuses;  // Whole run.
  std::string first_bad_response;    // Head and body of the first bad response.
  // CPU time over the counted window (time-boxed runs only): this whole
  // process, and the load threads alone.
  double process_cpu_seconds = 0;
  double client_cpu_seconds = 0;
  double rate() const { return seconds > 0 ? good / seconds : 0; }
};

absl::StatusOr<LoadResult> RunHttpLoad(const LoadOptions& options);

class BlockingHttpClient {
 public:
  BlockingHttpClient();
  ~BlockingHttpClient();
  absl::Status Connect(const std::string& host, uint16_t port);
  // Sends `request` (complete bytes) and reads one response.
  struct Response {
    int status = 0;
    std::string body;
  };
  absl::StatusOr<Response> RoundTrip(const std::string& request);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace keel::bench

#endif  // KEEL_CMD_KEEL_BENCH_HTTP_LOAD_H_
