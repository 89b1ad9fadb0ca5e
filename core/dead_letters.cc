#include "keel/core/dead_letters.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "keel/core/errors.h"
#include "keel/core/fnv.h"
#include "keel/core/policy_registry.h"
#include "keel/core/status_macros.h"

namespace keel {
namespace {

constexpr absl::string_view kDlqPrefix = "keel.dlq.";

// Short and bounded whatever the name lengths (keys are at most 255 bytes).
std::string DeadLetterKey(absl::string_view stream, absl::string_view group, uint64_t sequence) {
  const std::string names = absl::StrCat(stream, std::string(1, '\0'), group);
  return absl::StrFormat("keel.dlq:%016x:%d", Fnv1a64(names), sequence);
}

std::string Attribute(const Event& event, absl::string_view key) {
  auto it = event.attributes.find(std::string(key));
  return it == event.attributes.end() ? "" : it->second;
}

absl::StatusOr<ReplayPage> ReadDeadLetters(EventBus& bus, absl::string_view stream,
                                           const Position& after, size_t limit) {
  Replayer* replayer = bus.replayer();
  if (replayer == nullptr) return absl::UnimplementedError("this driver keeps no history");
  ReplayRequest request;
  request.stream = DeadLetterStream(stream);
  request.after = after;
  request.limit = limit;
  return replayer->Replay(request);
}

}  // namespace

Event MakeDeadLetter(const Event& event, absl::string_view group, absl::string_view reason,
                     uint64_t attempts) {
  Event letter;
  letter.stream = DeadLetterStream(event.stream);
  letter.type = event.type;
  letter.tenant = event.tenant;
  letter.payload = event.payload;
  letter.content_type = event.content_type;
  letter.attributes = event.attributes;
  letter.attributes[kDlqSourceStream] = event.stream;
  letter.attributes[kDlqSourceSequence] = absl::StrCat(event.sequence);
  letter.attributes[kDlqSourceId] = event.id;
  if (event.time != absl::InfinitePast()) {
    letter.attributes[kDlqSourceTime] =
        absl::FormatTime("%Y-%m-%d%ET%H:%M:%E9SZ", event.time, absl::UTCTimeZone());
  }
  letter.attributes[kDlqGroup] = std::string(group);
  letter.attributes[kDlqReason] = std::string(reason.substr(0, kMaxDlqReasonBytes));
  letter.attributes[kDlqAttempts] = absl::StrCat(attempts);
  letter.idempotency_key = DeadLetterKey(event.stream, group, event.sequence);
  return letter;
}

absl::StatusOr<DeadLetter> DecodeDeadLetter(Event event, uint64_t epoch) {
  DeadLetter letter;
  letter.source_stream = Attribute(event, kDlqSourceStream);
  if (letter.source_stream.empty() ||
      !absl::SimpleAtoi(Attribute(event, kDlqSourceSequence), &letter.source_sequence) ||
      !absl::SimpleAtoi(Attribute(event, kDlqAttempts), &letter.attempts)) {
    return InvalidArgument(absl::StrCat("event ", event.sequence, " of '", event.stream,
                                        "' is not a dead letter (no keel.dlq.* attributes)"));
  }
  letter.source_id = Attribute(event, kDlqSourceId);
  letter.group = Attribute(event, kDlqGroup);
  letter.reason = Attribute(event, kDlqReason);
  letter.cursor = Cursor::For(event.stream, epoch, event.sequence);
  letter.event = std::move(event);
  return letter;
}

absl::StatusOr<DeadLetterPage> ListDeadLetters(EventBus& bus, absl::string_view stream,
                                               const Position& after, size_t limit) {
  KEEL_ASSIGN_OR_RETURN(ReplayPage page, ReadDeadLetters(bus, stream, after, limit));
  DeadLetterPage out;
  out.next = page.next;
  out.reached_end = page.reached_end;
  for (Event& event : page.events) {
    // Events published to the dead-letter stream by hand are not dead
    // letters: skip them rather than fail the listing.
    absl::StatusOr<DeadLetter> letter = DecodeDeadLetter(std::move(event), bus.replayer()->epoch());
    if (letter.ok()) out.letters.push_back(*std::move(letter));
  }
  return out;
}

absl::StatusOr<DeadLetter> GetDeadLetter(EventBus& bus, absl::string_view stream,
                                         uint64_t sequence) {
  if (bus.replayer() == nullptr) return absl::UnimplementedError("this driver keeps no history");
  const std::string dlq = DeadLetterStream(stream);
  KEEL_ASSIGN_OR_RETURN(StreamInfo info, bus.replayer()->Bounds(dlq));
  if (sequence < info.first_sequence || sequence > info.last_sequence) {
    return NotFound(absl::StrCat("'", dlq, "' has no dead letter ", sequence));
  }
  const Position after = Position::After(Cursor::For(dlq, bus.replayer()->epoch(), sequence - 1));
  KEEL_ASSIGN_OR_RETURN(ReplayPage page, ReadDeadLetters(bus, stream, after, 1));
  if (page.events.empty() || page.events.front().sequence != sequence) {
    return NotFound(absl::StrCat("'", dlq, "' has no dead letter ", sequence));
  }
  return DecodeDeadLetter(std::move(page.events.front()), bus.replayer()->epoch());
}

Event OriginalEvent(const DeadLetter& letter) {
  Event event;
  event.stream = letter.source_stream;
  event.sequence = letter.source_sequence;
  event.id = letter.source_id;
  event.time = letter.event.time;
  std::string error;
  absl::Time source_time;
  if (absl::ParseTime(absl::RFC3339_full, Attribute(letter.event, kDlqSourceTime), &source_time,
                      &error)) {
    event.time = source_time;
  }
  event.type = letter.event.type;
  event.tenant = letter.event.tenant;
  event.payload = letter.event.payload;
  event.content_type = letter.event.content_type;
  for (const auto& [key, value] : letter.event.attributes) {
    if (!absl::StartsWith(key, kDlqPrefix)) event.attributes.emplace(key, value);
  }
  return event;
}

absl::StatusOr<Receipt> Republish(EventBus& bus, absl::string_view stream, uint64_t sequence) {
  KEEL_ASSIGN_OR_RETURN(DeadLetter letter, GetDeadLetter(bus, stream, sequence));
  if (letter.source_stream != stream) {
    return InvalidArgument(absl::StrCat("dead letter ", sequence, " came from '",
                                        letter.source_stream, "', not '", stream, "'"));
  }
  // Republished as a new event: the bus assigns its sequence, id and time.
  Event event = OriginalEvent(letter);
  event.sequence = 0;
  event.id.clear();
  event.time = absl::InfinitePast();
  const std::string cursor = letter.cursor.Encode();
  event.attributes[kRepublishedFrom] = cursor;
  event.idempotency_key = absl::StrCat("keel.republish:", cursor);
  return bus.Publish(std::move(event));
}

}  // namespace keel
