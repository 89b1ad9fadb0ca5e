#include "keel/tests/conformance/helpers.h"

#include <atomic>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "keel/core/errors.h"
#include "keel/core/subscription.h"

namespace keel::conformance {

Event MakeEvent(absl::string_view stream, absl::string_view type, absl::string_view payload) {
  static std::atomic<uint64_t> counter{0};
  Event event;
  event.stream = std::string(stream);
  event.type = std::string(type);
  event.payload =
      payload.empty() ? absl::StrCat("payload-", counter.fetch_add(1)) : std::string(payload);
  return event;
}

absl::StatusOr<std::vector<Receipt>> PublishN(EventBus& bus, absl::string_view stream, int count,
                                              absl::string_view tag) {
  std::vector<Receipt> receipts;
  for (int i = 0; i < count; ++i) {
    absl::StatusOr<Receipt> receipt =
        bus.Publish(MakeEvent(stream, "test.event", absl::StrCat(tag, "-", i)));
    if (!receipt.ok()) return receipt.status();
    receipts.push_back(*std::move(receipt));
  }
  return receipts;
}

absl::StatusOr<std::vector<Event>> ReplayAll(Replayer& replayer, ReplayRequest request) {
  std::vector<Event> events;
  // A page that neither returns events nor moves `next` would loop forever;
  // bound the number of pages by what the stream can possibly hold.
  for (int pages = 0; pages < 1'000'000; ++pages) {
    absl::StatusOr<ReplayPage> page = replayer.Replay(request);
    if (!page.ok()) return page.status();
    for (Event& event : page->events) events.push_back(std::move(event));
    if (page->reached_end) return events;
    const bool advanced = request.after.kind != Position::Kind::kCursor ||
                          page->next.sequence > request.after.cursor.sequence;
    if (!advanced) {
      return absl::InternalError(absl::StrCat("replay page did not advance past sequence ",
                                              page->next.sequence, " nor reach the end"));
    }
    request.after = Position::After(page->next);
  }
  return absl::InternalError("replay did not reach the end");
}

absl::StatusOr<std::vector<Event>> ReplayStream(Replayer& replayer, absl::string_view stream) {
  ReplayRequest request;
  request.stream = std::string(stream);
  request.after = Position::Earliest();
  request.limit = kMaxReplayLimit;
  return ReplayAll(replayer, std::move(request));
}

std::vector<uint64_t> Sequences(const std::vector<Event>& events) {
  std::vector<uint64_t> out;
  for (const Event& event : events) out.push_back(event.sequence);
  return out;
}

std::vector<uint64_t> Sequences(const std::vector<EventPtr>& events) {
  std::vector<uint64_t> out;
  for (const EventPtr& event : events) out.push_back(event->sequence);
  return out;
}

std::vector<uint64_t> Sequences(const std::vector<Receipt>& receipts) {
  std::vector<uint64_t> out;
  for (const Receipt& receipt : receipts) out.push_back(receipt.sequence);
  return out;
}

std::vector<uint64_t> Range(uint64_t first, uint64_t last) {
  std::vector<uint64_t> out;
  for (uint64_t s = first; s <= last; ++s) out.push_back(s);
  return out;
}

bool IsNotice(const Event& event) {
  return event.sequence == 0 && (event.type == kDroppedNoticeType || event.type == kGapNoticeType);
}

absl::StatusOr<std::unique_ptr<Subscription>> SubscribeLive(EventBus& bus,
                                                            const SubscribeOptions& options) {
  absl::StatusOr<std::unique_ptr<Subscription>> subscription = bus.Subscribe(options);
  if (!subscription.ok()) return subscription.status();
  absl::StatusOr<std::vector<EventPtr>> first = (*subscription)->Poll(1);
  if (!first.ok()) return first.status();
  if (!first->empty()) {
    return absl::InternalError(absl::StrCat("a new subscription at '", options.after.ToString(),
                                            "' of an idle stream returned sequence ",
                                            first->front()->sequence));
  }
  return subscription;
}

namespace {

// Appends `batch` to `result`; returns the highest real sequence seen.
uint64_t Collect(std::vector<EventPtr>& batch, ReadResult& result, uint64_t highest) {
  for (EventPtr& event : batch) {
    if (IsNotice(*event)) {
      result.notices.push_back(event);
    } else {
      highest = std::max(highest, event->sequence);
      result.events.push_back(event);
    }
    result.all.push_back(std::move(event));
  }
  return highest;
}

}  // namespace

ReadResult ReadThrough(Subscription& subscription, uint64_t last, absl::Duration deadline) {
  ReadResult result;
  uint64_t highest = 0;
  const absl::Time end = absl::Now() + deadline;
  while (highest < last && absl::Now() < end) {
    absl::StatusOr<std::vector<EventPtr>> batch = subscription.Next(1000, kWait);
    if (!batch.ok()) {
      result.status = batch.status();
      break;
    }
    if (batch->empty()) break;  // Silent for kWait: nothing more is coming.
    highest = Collect(*batch, result, highest);
  }
  return result;
}

ReadResult ReadToError(Subscription& subscription, absl::Duration deadline) {
  ReadResult result;
  uint64_t highest = 0;
  const absl::Time end = absl::Now() + deadline;
  while (absl::Now() < end) {
    absl::StatusOr<std::vector<EventPtr>> batch = subscription.Next(1000, kWait);
    if (!batch.ok()) {
      result.status = batch.status();
      break;
    }
    if (batch->empty()) break;  // Silent for kWait: no error is coming.
    highest = Collect(*batch, result, highest);
  }
  return result;
}

std::set<uint64_t> NoticeRangeSequences(const Event& notice) {
  std::set<uint64_t> out;
  auto it = notice.attributes.find(kNoticeRanges);
  if (it == notice.attributes.end()) return out;
  for (absl::string_view range : absl::StrSplit(it->second, ',', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> bounds = absl::StrSplit(range, '-');
    uint64_t first = 0, last = 0;
    if (!absl::SimpleAtoi(bounds.first, &first) || !absl::SimpleAtoi(bounds.second, &last) ||
        last < first) {
      return {};
    }
    for (uint64_t s = first; s <= last; ++s) out.insert(s);
  }
  return out;
}

uint64_t NoticeAttribute(const Event& notice, absl::string_view key) {
  auto it = notice.attributes.find(std::string(key));
  uint64_t value = 0;
  if (it == notice.attributes.end() || !absl::SimpleAtoi(it->second, &value)) return 0;
  return value;
}

}  // namespace keel::conformance
