#include "keel/cmd/keel/server/push/push_subscription.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "keel/cmd/keel/server/push/endpoint_url.h"
#include "keel/core/errors.h"
#include "keel/core/group_coordinator.h"
#include "keel/core/status_macros.h"

namespace keel::push {
namespace {

constexpr size_t kMaxNameBytes = 200;  // "push." + name + ".dlq" stays a stream name.
constexpr size_t kMinSecretBytes = 16;

absl::Status ValidateRetry(const RetryPolicy& retry) {
  if (retry.max_attempts < 1 || retry.max_attempts > 100) {
    return InvalidArgument("retry.maxAttempts must be 1 to 100");
  }
  if (retry.initial_backoff < absl::ZeroDuration() || retry.max_backoff < retry.initial_backoff) {
    return InvalidArgument("retry backoff must be >= 0 with maxBackoff >= initialBackoff");
  }
  if (retry.multiplier < 1.0 || retry.multiplier > 10.0) {
    return InvalidArgument("retry.multiplier must be 1 to 10");
  }
  return absl::OkStatus();
}

absl::Status ValidateCircuit(const CircuitPolicy& circuit) {
  if (circuit.failure_threshold < 0 || circuit.failure_threshold > 1000) {
    return InvalidArgument("circuit.failureThreshold must be 0 to 1000");
  }
  if (circuit.open_for <= absl::ZeroDuration() || circuit.open_for > absl::Hours(1)) {
    return InvalidArgument("circuit.openMs must be more than 0 and at most 1h");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Validate(const PushSubscription& s) {
  if (s.name.size() > kMaxNameBytes) {
    return InvalidArgument(absl::StrCat("name must be at most ", kMaxNameBytes, " characters"));
  }
  KEEL_RETURN_IF_ERROR(ValidateGroupName(s.name));
  if (s.streams.text().empty()) return InvalidArgument("streams (a pattern) is required");
  KEEL_RETURN_IF_ERROR(ParseEndpointUrl(s.endpoint).status());
  if (s.batch_size < 1 || s.batch_size > kMaxPushBatch) {
    return InvalidArgument(absl::StrCat("batchSize must be 1 to ", kMaxPushBatch));
  }
  if (s.linger < absl::ZeroDuration() || s.linger > absl::Minutes(10)) {
    return InvalidArgument("linger must be 0 to 10m");
  }
  if (s.timeout <= absl::ZeroDuration() || s.timeout > absl::Minutes(5)) {
    return InvalidArgument("timeout must be more than 0 and at most 5m");
  }
  if (s.concurrency < 1 || s.concurrency > kMaxPushConcurrency) {
    return InvalidArgument(absl::StrCat("concurrency must be 1 to ", kMaxPushConcurrency));
  }
  KEEL_RETURN_IF_ERROR(ValidateRetry(s.retry));
  KEEL_RETURN_IF_ERROR(ValidateCircuit(s.circuit));
  if (s.secrets.empty() || s.secrets.size() > kMaxSigningSecrets) {
    return InvalidArgument("secrets must hold one or two signing secrets");
  }
  for (const std::string& secret : s.secrets) {
    if (secret.size() < kMinSecretBytes) {
      return InvalidArgument(
          absl::StrCat("a signing secret must be at least ", kMinSecretBytes, " bytes"));
    }
  }
  return absl::OkStatus();
}

std::string DriftBetween(const PushSubscription& a, const PushSubscription& b) {
  std::vector<std::string> fields;
  auto differ = [&](bool same, absl::string_view field) {
    if (!same) fields.emplace_back(field);
  };
  differ(a.streams == b.streams, "streams");
  differ(a.type_prefix == b.type_prefix, "typePrefix");
  differ(a.tenant == b.tenant, "tenant");
  differ(a.endpoint == b.endpoint, "endpoint");
  differ(a.batch_size == b.batch_size, "batchSize");
  differ(a.linger == b.linger, "linger");
  differ(a.timeout == b.timeout, "timeout");
  differ(a.concurrency == b.concurrency, "concurrency");
  differ(a.retry.max_attempts == b.retry.max_attempts, "retry.maxAttempts");
  differ(a.retry.initial_backoff == b.retry.initial_backoff, "retry.initialBackoff");
  differ(a.retry.max_backoff == b.retry.max_backoff, "retry.maxBackoff");
  differ(a.retry.multiplier == b.retry.multiplier, "retry.multiplier");
  differ(a.circuit.failure_threshold == b.circuit.failure_threshold, "circuit.failureThreshold");
  differ(a.circuit.open_for == b.circuit.open_for, "circuit.openMs");
  differ(a.dead_letter_retention == b.dead_letter_retention, "deadLetterRetention");
  differ(a.start_at_latest == b.start_at_latest, "start");
  differ(a.allow_self == b.allow_self, "allowSelf");
  return absl::StrJoin(fields, ", ");
}

}  // namespace keel::push
