#include "keel/cmd/keel/server/push/endpoint_sender.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/push/retry_delay.h"

namespace keel::push {
namespace {

// An endpoint's answer body says why it refused; a little of it is kept.
constexpr size_t kReasonBodyBytes = 200;

bool Retryable(int status) { return status == 429 || status == 408 || status >= 500; }

}  // namespace

AttemptOutcome ClassifyResponse(const absl::StatusOr<client::ClientResponse>& response,
                                absl::Time now) {
  AttemptOutcome outcome;
  if (!response.ok()) {
    outcome.kind = AttemptOutcome::Kind::kRetry;
    outcome.reason = absl::StrCat("no answer: ", response.status().message());
    return outcome;
  }
  outcome.status = response->status;
  if (response->ok()) {
    outcome.kind = AttemptOutcome::Kind::kDelivered;
    return outcome;
  }
  outcome.kind =
      Retryable(response->status) ? AttemptOutcome::Kind::kRetry : AttemptOutcome::Kind::kRejected;
  outcome.reason = absl::StrCat("HTTP ", response->status);
  if (!response->body.empty()) {
    absl::StrAppend(&outcome.reason, ": ", response->body.substr(0, kReasonBodyBytes));
  }
  if (response->status == 429 || response->status == 503) {
    outcome.retry_after = ParseRetryAfter(response->Header("retry-after"), now);
  }
  return outcome;
}

bool EndpointFailed(const AttemptOutcome& outcome) {
  return outcome.kind == AttemptOutcome::Kind::kRetry && outcome.status != 429;
}

EndpointSender::EndpointSender(EndpointUrl url, absl::Duration timeout, std::string ca_file)
    : url_(std::move(url)) {
  client::ClientOptions options;
  options.connect_timeout = std::min(timeout, absl::Seconds(5));
  options.request_timeout = timeout;
  options.max_response_bytes = 1 << 20;
  options.tls.enabled = url_.tls;
  options.tls.ca_file = std::move(ca_file);
  http_ = std::make_unique<client::HttpClient>(url_.host, url_.port, std::move(options));
}

AttemptOutcome EndpointSender::Post(const std::string& body, const client::Headers& headers) {
  const absl::Time start = absl::Now();
  absl::StatusOr<client::ClientResponse> response =
      http_->Request("POST", url_.target, body, headers);
  AttemptOutcome outcome = ClassifyResponse(response, absl::Now());
  outcome.latency = absl::Now() - start;
  if (outcome.kind != AttemptOutcome::Kind::kDelivered) http_->Close();
  return outcome;
}

}  // namespace keel::push
