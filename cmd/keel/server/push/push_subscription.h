// PushSubscription: what a push subscription is declared as — which events
// (a stream pattern, an optional type prefix and tenant), where they go (an
// http or https endpoint), in what batches, with what timeout and retry
// policy, signed with which secrets (rfcs/0010-push-subscriptions.md).
//
// Declaring a name again with the same settings is a no-op; different
// settings are kResourceDrift naming the fields (DriftBetween). The signing
// secrets are not part of the comparison: they rotate (SetSecrets) without a
// new declaration.
//
// Thread safety: a plain value type.
#ifndef KEEL_CMD_KEEL_SERVER_PUSH_PUSH_SUBSCRIPTION_H_
#define KEEL_CMD_KEEL_SERVER_PUSH_PUSH_SUBSCRIPTION_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/cmd/keel/server/push/stream_pattern.h"
#include "keel/core/stream_policy.h"

namespace keel::push {

struct RetryPolicy {
  int max_attempts = 8;  // POSTs of one batch before its events are dead-lettered; 1..100.
  absl::Duration initial_backoff = absl::Milliseconds(500);
  absl::Duration max_backoff = absl::Minutes(5);  // The cap of the exponential growth.
  double multiplier = 2.0;

  friend bool operator==(const RetryPolicy&, const RetryPolicy&) = default;
};

// When the endpoint stops answering: after `failure_threshold` POSTs in a
// row failed for the endpoint (no answer, 408, 5xx; EndpointFailed in
// endpoint_sender.h), the circuit opens and no POST goes out for `open_for`; then one
// POST probes the endpoint (the others wait for its outcome), which closes
// the circuit or opens it again. 0 never opens it.
struct CircuitPolicy {
  int failure_threshold = 5;  // 0..1000.
  absl::Duration open_for = absl::Seconds(30);

  friend bool operator==(const CircuitPolicy&, const CircuitPolicy&) = default;
};

// At most two secrets sign at once: the new one and the one it replaces.
inline constexpr size_t kMaxSigningSecrets = 2;
inline constexpr size_t kMaxPushBatch = 1000;
inline constexpr int kMaxPushConcurrency = 64;

struct PushSubscription {
  std::string name;  // [A-Za-z0-9._:-]{1,200}
  StreamPattern streams;
  std::string type_prefix;  // Empty: every type.
  std::string tenant;       // Empty: every tenant.
  std::string endpoint;     // http:// or https:// URL.
  size_t batch_size = 100;  // Events per POST; 1..kMaxPushBatch.
  // How long the oldest undelivered event may wait for a batch to fill.
  absl::Duration linger = absl::ZeroDuration();
  absl::Duration timeout = absl::Seconds(10);  // One POST, connect included.
  // Batches in flight at once, each of a different stream (a stream's
  // batches go one after the other, in order), each on a kept-alive
  // connection of its own; 1..kMaxPushConcurrency.
  int concurrency = 1;
  RetryPolicy retry;
  CircuitPolicy circuit;
  // How long dead letters are kept: declared as the dead_letter.* policy
  // of DeadLetterSource() when the subscription is created. Unbounded
  // (default): the policy in force for that stream is left as it is.
  RetentionLimits dead_letter_retention;
  // Where a stream that exists at creation starts: false (default) at its
  // first retained event, true after its last one. Streams that appear
  // later always start at their first event.
  bool start_at_latest = false;
  // Lets the endpoint be this daemon's own address (a loop otherwise).
  bool allow_self = false;
  std::vector<std::string> secrets;  // 1..kMaxSigningSecrets, each >= 16 bytes.

  // The consumer group holding the subscription's cursor on each stream.
  std::string GroupName() const { return "push." + name; }
  // The stream whose dead-letter stream holds the subscription's failures:
  // ListDeadLetters(bus, DeadLetterSource()) reads them.
  std::string DeadLetterSource() const { return "push." + name; }
  // The stream dead letters are published to ("push.<name>.dlq").
  std::string DeadLetterStream() const { return DeadLetterSource() + ".dlq"; }
  // The consumer group holding redrive's cursor on DeadLetterStream().
  std::string RedriveGroupName() const { return "push." + name + ".redrive"; }
};

// kInvalidArgument naming the first bad field.
absl::Status Validate(const PushSubscription& subscription);

// The names of the declared fields in which `a` and `b` differ (secrets
// excluded), comma-separated; "" when they declare the same subscription.
std::string DriftBetween(const PushSubscription& a, const PushSubscription& b);

}  // namespace keel::push

#endif  // KEEL_CMD_KEEL_SERVER_PUSH_PUSH_SUBSCRIPTION_H_
