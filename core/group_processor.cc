#include "keel/core/group_processor.h"

#include "absl/strings/str_cat.h"
#include "keel/core/dead_letters.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel {
namespace {

absl::Status ValidateOptions(const ProcessOptions& options) {
  if (options.max_attempts < 1) {
    return InvalidArgument(absl::StrCat("max_attempts must be at least 1; got ",
                                        options.max_attempts));
  }
  return options.backoff.Validate();
}

Sleeper SleeperOf(const ProcessOptions& options, const Notification* stop) {
  if (options.sleep) return options.sleep;
  if (stop == nullptr) {
    return [](absl::Duration delay) {
      absl::SleepFor(delay);
      return true;
    };
  }
  return [stop](absl::Duration delay) { return !stop->WaitForNotificationWithTimeout(delay); };
}

// One event: the handler until it succeeds or `max_attempts` calls failed,
// then a dead letter. False when a stop interrupted a backoff.
absl::StatusOr<bool> HandleEvent(EventBus& bus, absl::string_view group, const Event& event,
                                 const EventHandler& handler, const ProcessOptions& options,
                                 const Sleeper& sleep, ProcessResult& result) {
  for (int attempt = 1;; ++attempt) {
    absl::Status status = handler(event);
    if (status.ok()) {
      ++result.handled;
      return true;
    }
    if (attempt >= options.max_attempts) {
      KEEL_RETURN_IF_ERROR(
          bus.Publish(MakeDeadLetter(event, group, status.message(), attempt)).status());
      ++result.dead_lettered;
      return true;
    }
    ++result.retries;
    if (!sleep(options.backoff.Delay(attempt))) return false;
  }
}

}  // namespace

absl::StatusOr<ProcessResult> ProcessOnce(EventBus& bus, absl::string_view stream,
                                          absl::string_view group, const EventHandler& handler,
                                          const ProcessOptions& options,
                                          const Notification* stop) {
  KEEL_RETURN_IF_ERROR(ValidateOptions(options));
  ConsumerGroups* groups = bus.groups();
  if (groups == nullptr) return absl::UnimplementedError("this driver keeps no consumer groups");
  ConsumeRequest request{std::string(stream), std::string(group), options.batch, options.lease,
                         options.start};
  KEEL_ASSIGN_OR_RETURN(ConsumePage page, groups->Consume(request));
  ProcessResult result;
  if (page.events.empty()) {
    result.idle = true;
    return result;
  }
  const Sleeper sleep = SleeperOf(options, stop);
  Cursor done = page.lease.from;
  for (const Event& event : page.events) {
    if (stop != nullptr && stop->HasBeenNotified()) break;
    KEEL_ASSIGN_OR_RETURN(bool finished, HandleEvent(bus, group, event, handler, options, sleep,
                                                     result));
    if (!finished) break;
    done = Cursor{done.epoch, done.stream_tag, event.sequence};
  }
  result.stopped = done.sequence != page.lease.to.sequence;
  absl::Status committed = groups->Commit(stream, group, done, page.lease.token);
  if (GetErrorKind(committed) == ErrorKind::kConflict) {
    result.lease_lost = true;
    return result;
  }
  KEEL_RETURN_IF_ERROR(committed);
  return result;
}

absl::Status Process(EventBus& bus, absl::string_view stream, absl::string_view group,
                     const EventHandler& handler, const ProcessOptions& options,
                     const Notification& stop) {
  const Sleeper sleep = SleeperOf(options, &stop);
  while (!stop.HasBeenNotified()) {
    KEEL_ASSIGN_OR_RETURN(ProcessResult result,
                          ProcessOnce(bus, stream, group, handler, options, &stop));
    if (result.idle && !sleep(options.idle_wait)) break;
  }
  return absl::OkStatus();
}

}  // namespace keel
