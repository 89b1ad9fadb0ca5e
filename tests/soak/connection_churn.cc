#include "keel/tests/soak/connection_churn.h"

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/cmd/keel/client/sse_reader.h"

namespace keel::soak_test {
namespace {

// Between two connections; every kStreamEvery-th is an SSE stream.
constexpr absl::Duration kPause = absl::Milliseconds(10);
constexpr int kStreamEvery = 4;

}  // namespace

ConnectionChurn::ConnectionChurn(std::vector<std::string> streams,
                                 const crash_test::Endpoint& endpoint,
                                 crash_test::Failures& failures)
    : streams_(std::move(streams)), endpoint_(endpoint), failures_(failures) {}

void ConnectionChurn::Run(const std::atomic<bool>& stop) {
  for (int i = 0; !stop.load(); ++i) {
    if (i % kStreamEvery == 0) {
      BriefStream(streams_[(i / kStreamEvery) % streams_.size()]);
    } else {
      Request();
    }
    absl::SleepFor(kPause);
  }
}

void ConnectionChurn::Request() {
  client::HttpClient http("127.0.0.1", endpoint_.port());
  ++connections_;
  for (const char* target : {"/healthz", "/v1/streams?limit=10"}) {
    absl::StatusOr<client::ClientResponse> response = http.Get(target);
    if (!response.ok() || !response->ok()) {
      failures_.Add("connection churn",
                    absl::StrCat("GET ", target, ": ",
                                 response.ok() ? absl::StrCat(response->status, " ", response->body)
                                               : response.status().ToString()));
    }
  }
}

// Opens a stream at its head, waits briefly for a frame, and drops it.
void ConnectionChurn::BriefStream(const std::string& stream) {
  client::SseOptions options;
  options.stream = stream;
  options.after = "latest";
  absl::StatusOr<std::unique_ptr<client::SseReader>> reader =
      client::SseReader::Open("127.0.0.1", endpoint_.port(), options);
  ++connections_;
  if (!reader.ok()) {
    failures_.Add("connection churn",
                  absl::StrCat("SSE ", stream, ": ", reader.status().ToString()));
    return;
  }
  ++sse_streams_;
  absl::StatusOr<client::SseFrame> frame = (*reader)->Next(absl::Milliseconds(20));
  if (!frame.ok() && !absl::IsDeadlineExceeded(frame.status())) {
    failures_.Add("connection churn",
                  absl::StrCat("SSE ", stream, ": ", frame.status().ToString()));
  }
}

}  // namespace keel::soak_test
