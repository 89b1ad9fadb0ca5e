#include "keel/tests/crash/sse_follower.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "keel/cmd/keel/client/errors.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"

namespace keel::crash_test {
namespace {

constexpr char kKind[] = "SSE followers";

}  // namespace

SseFollower::SseFollower(std::string stream, const Endpoint& endpoint, Failures& failures,
                         const FinalHeads& heads)
    : stream_(std::move(stream)), endpoint_(endpoint), failures_(failures), heads_(heads) {}

bool SseFollower::ReachedFinalHead() const {
  const std::optional<uint64_t> head = heads_.Of(stream_);
  return head.has_value() && last_sequence_ >= *head;
}

void SseFollower::Run(const std::atomic<bool>& abandon) {
  give_up_ = absl::Now() + daemon_test::kWait;
  while (!abandon.load() && !ReachedFinalHead()) {
    if (absl::Now() > give_up_) {
      failures_.Add(kKind, absl::StrCat("SSE follower of ", stream_, ": nothing received for ",
                                        absl::FormatDuration(daemon_test::kWait), " after #",
                                        last_sequence_));
      return;
    }
    client::SseOptions options;
    options.stream = stream_;
    if (last_event_id_.empty()) {
      options.after = "earliest";
    } else {
      options.last_event_id = last_event_id_;
    }
    options.connect_timeout = absl::Seconds(2);
    absl::StatusOr<std::unique_ptr<client::SseReader>> reader =
        client::SseReader::Open("127.0.0.1", endpoint_.port(), options);
    if (!reader.ok()) {
      // Refusing the resume position is the daemon's answer, not the kill's.
      const std::optional<client::HttpError> error = client::GetHttpError(reader.status());
      if (error.has_value() && error->status != 503) {
        failures_.Add(
            kKind, absl::StrCat("SSE follower of ", stream_, ": resuming after #", last_sequence_,
                                " refused: ", reader.status().ToString()));
        return;
      }
      absl::SleepFor(kRetryWait);
      continue;
    }
    ++connections_;
    if (ReadConnection(**reader, abandon) == After::kStop) return;
  }
}

SseFollower::After SseFollower::ReadConnection(client::SseReader& reader,
                                               const std::atomic<bool>& abandon) {
  while (true) {
    absl::StatusOr<client::SseFrame> frame = reader.Next(absl::Milliseconds(200));
    if (abandon.load() || ReachedFinalHead()) return After::kStop;
    if (absl::IsDeadlineExceeded(frame.status())) {
      if (absl::Now() > give_up_) return After::kReconnect;  // Run reports it.
      continue;
    }
    if (!frame.ok()) return After::kReconnect;  // The kill ended the stream.
    if (!frame->IsEvent()) continue;            // retry: and keepalive comments.
    if (frame->event != "crash.event") {
      // keel.gap (events skipped), keel.error (the subscription failed).
      failures_.Add(kKind, absl::StrCat("SSE follower of ", stream_, ": a '", frame->event,
                                        "' frame after #", last_sequence_, ": ", frame->data));
      if (frame->event == "keel.error") return After::kReconnect;
      continue;
    }
    Receive(*frame);
  }
}

void SseFollower::Receive(const client::SseFrame& frame) {
  absl::StatusOr<EventIdentity> event = IdentityOf(frame.data);
  if (!event.ok() || !frame.id.has_value()) {
    failures_.Add(kKind, absl::StrCat("SSE follower of ", stream_,
                                      ": a frame without event or id: ", frame.data));
    return;
  }
  if (event->sequence != last_sequence_ + 1) {
    failures_.Add(kKind,
                  absl::StrCat("SSE follower of ", stream_, ": ", Describe(*event), " after #",
                               last_sequence_, " (connection ", connections_, ")"));
  }
  last_sequence_ = event->sequence;
  last_event_id_ = *frame.id;
  give_up_ = absl::Now() + daemon_test::kWait;
  events_.push_back(*std::move(event));
}

}  // namespace keel::crash_test
