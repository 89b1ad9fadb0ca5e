// The summary of wrk's output that `keel-bench http` turns into figures:
// a run with failed requests must not pass as a fast one.
#include "keel/cmd/keel-bench/wrk_load.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::bench {
namespace {

constexpr char kCleanRun[] = R"(Running 6s test @ http://127.0.0.1:40123/v1/streams/bench/events
  2 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   812.34us  301.22us  12.01ms   90.12%
    Req/Sec    30.77k     1.52k   34.10k    71.67%
  367512 requests in 6.00s, 98.13MB read
Requests/sec:  61251.02
Transfer/sec:     16.35MB
)";

// The figures ParseWrkOutput must read from an output.
struct Summary {
  uint64_t requests;
  double seconds;
  uint64_t bad_responses;
  uint64_t socket_errors;
};

void ExpectSummary(const std::string& output, const Summary& expected) {
  absl::StatusOr<WrkResult> result = ParseWrkOutput(output);
  ASSERT_OK(result.status());
  EXPECT_EQ(result->requests, expected.requests);
  EXPECT_DOUBLE_EQ(result->seconds, expected.seconds);
  EXPECT_EQ(result->bad_responses, expected.bad_responses);
  EXPECT_EQ(result->socket_errors, expected.socket_errors);
}

TEST(WrkOutputTest, ReadsRequestsAndDurationOfACleanRun) {
  ExpectSummary(kCleanRun, {.requests = 367512, .seconds = 6.0, .bad_responses = 0,
                            .socket_errors = 0});
}

TEST(WrkOutputTest, CountsNon2xxResponsesAndSocketErrors) {
  const std::string output =
      absl::StrCat("  1200 requests in 500.00ms, 1.00MB read\n",
                   "  Socket errors: connect 1, read 2, write 3, timeout 4\n",
                   "  Non-2xx or 3xx responses: 17\n", "Requests/sec:   2400.00\n");
  ExpectSummary(output, {.requests = 1200, .seconds = 0.5, .bad_responses = 17,
                         .socket_errors = 10});
}

TEST(WrkOutputTest, OutputWithoutTotalsIsAnError) {
  EXPECT_FALSE(ParseWrkOutput("unable to connect to 127.0.0.1:1 Connection refused\n").ok());
}

}  // namespace
}  // namespace keel::bench
