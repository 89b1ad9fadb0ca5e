// Process: runs a handler over a stream as a member of a consumer group,
// with retries, backoff and a dead-letter stream (core/dead_letters.h).
//
// ProcessOnce consumes one page (core/consumer_groups.h) and, for each
// event in order, calls the handler: success moves on; a failure is retried
// after Backoff::Delay(1), Delay(2), ... until `max_attempts` calls failed,
// then the event is published as a dead letter (with the last error message
// and the attempt count) and the group moves on. After the page it commits
// the last finished event — one commit per page, because a commit ends the
// lease. If the commit is refused (kConflict: the lease expired and was
// granted to another consumer, or the group was sought) the page is
// abandoned; the new holder sees its events again. Delivery is therefore
// at-least-once: a handler must tolerate repeats, and a repeated dead letter
// is suppressed by its idempotency key (within the dead-letter stream's
// dedupe window).
//
// Process loops ProcessOnce until `stop` is notified, waiting `idle_wait`
// when there was nothing to consume or another member held the lease.
// Waits go through ProcessOptions::sleep, which tests replace; the default
// waits on `stop` so a stop ends a backoff at once (the interrupted event is
// not committed and will be delivered again).
//
// Thread safety: one call per thread; any number of processors (threads or
// processes) may serve one group — the lease serialises them.
#ifndef KEEL_CORE_GROUP_PROCESSOR_H_
#define KEEL_CORE_GROUP_PROCESSOR_H_

#include <cstddef>
#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/core/backoff.h"
#include "keel/core/consumer_groups.h"
#include "keel/core/event_bus.h"
#include "keel/core/mutex.h"

namespace keel {

using EventHandler = std::function<absl::Status(const Event&)>;
// Waits `delay`; returns false when the processor should stop instead.
using Sleeper = std::function<bool(absl::Duration delay)>;

struct ProcessOptions {
  int max_attempts = 5;  // Handler calls per event before it is dead-lettered; >= 1.
  Backoff backoff;
  absl::Duration lease = absl::Seconds(30);  // Must cover handling a whole page.
  size_t batch = 100;                        // Events per page.
  ConsumeRequest::Start start = ConsumeRequest::Start::kEarliest;
  absl::Duration idle_wait = absl::Milliseconds(200);
  Sleeper sleep;  // Empty: wait on the stop notification (or just sleep).
};

// What one ProcessOnce did.
struct ProcessResult {
  size_t handled = 0;        // Events the handler accepted.
  size_t dead_lettered = 0;  // Events given up on.
  size_t retries = 0;        // Handler calls after a failure.
  bool idle = false;         // Nothing to consume, or another member's lease.
  bool lease_lost = false;   // The commit was refused; the page is abandoned.
  bool stopped = false;      // Stopped mid-page; the rest is left uncommitted.
};

absl::StatusOr<ProcessResult> ProcessOnce(EventBus& bus, absl::string_view stream,
                                          absl::string_view group, const EventHandler& handler,
                                          const ProcessOptions& options,
                                          const Notification* stop = nullptr);

// Until `stop`; returns the first error other than a lost lease.
absl::Status Process(EventBus& bus, absl::string_view stream, absl::string_view group,
                     const EventHandler& handler, const ProcessOptions& options,
                     const Notification& stop);

}  // namespace keel

#endif  // KEEL_CORE_GROUP_PROCESSOR_H_
