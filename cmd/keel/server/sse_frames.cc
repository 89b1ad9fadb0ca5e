#include "keel/cmd/keel/server/sse_frames.h"

#include <algorithm>
#include <cstring>

#include "absl/hash/hash.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/json_codec.h"

namespace keel::server {
namespace {

// One `data:` line per line of `data`; carriage returns are dropped.
void AppendData(absl::string_view data, std::string& out) {
  out += "data: ";
  while (!data.empty()) {
    const size_t stop = std::min(data.find_first_of("\r\n"), data.size());
    out.append(data.data(), stop);
    if (stop < data.size() && data[stop] == '\n') out += "\ndata: ";
    data.remove_prefix(std::min(stop + 1, data.size()));
  }
  out += "\n\n";
}

// memchr, not find_first_of: Abseil's builds a table of the set per call.
bool HasLineBreak(absl::string_view text) {
  return memchr(text.data(), '\n', text.size()) != nullptr ||
         memchr(text.data(), '\r', text.size()) != nullptr;
}

// An event's frame, its JSON written straight after `data: `. Every string
// in the JSON is escaped, so only a JSON payload, embedded as published, can
// hold a line break (a library publisher's may span lines); such an event's
// data is split into lines.
void AppendEventFrame(const Event& event, uint64_t epoch, std::string& out) {
  const Cursor::Token token = Cursor::For(event.stream, epoch, event.sequence).EncodeToken();
  const absl::string_view cursor = token.view();
  absl::StrAppend(&out, "id: ", cursor, "\nevent: ", event.type, "\n");
  if (event.content_type == kJsonContentType && HasLineBreak(event.payload)) {
    std::string json;
    AppendEventJson(event, cursor, json);
    return AppendData(json, out);
  }
  out += "data: ";
  AppendEventJson(event, cursor, out);
  out += "\n\n";
}

uint64_t Attribute(const Event& notice, const char* key) {
  uint64_t value = 0;
  auto it = notice.attributes.find(key);
  if (it != notice.attributes.end()) (void)absl::SimpleAtoi(it->second, &value);
  return value;
}

}  // namespace

void AppendSseIdFrame(const Cursor& position, std::string& out) {
  absl::StrAppend(&out, "id: ", position.Encode(), "\n\n");
}

void AppendSseFrame(const Event& event, uint64_t epoch, std::string& out) {
  if (event.sequence == 0 && event.type == kGapNoticeType) {
    const uint64_t first = Attribute(event, kNoticeFirst);
    const uint64_t last = Attribute(event, kNoticeLast);
    out += "event: keel.gap\n";
    AppendData(absl::StrCat("{\"requested\":\"", Cursor::For(event.stream, epoch, first - 1).Encode(),
                            "\",\"oldest\":\"", Cursor::For(event.stream, epoch, last + 1).Encode(),
                            "\",\"resume\":\"", Cursor::For(event.stream, epoch, last).Encode(),
                            "\",\"missed\":", Attribute(event, kNoticeCount),
                            ",\"first\":", first, ",\"last\":", last, "}"),
               out);
    return;
  }
  if (event.sequence == 0) {  // Another notice kind: forward its name and attributes.
    absl::StrAppend(&out, "event: keel.notice\n");
    AppendData(absl::StrCat("{\"type\":", JsonString(event.type), "}"), out);
    return;
  }
  AppendEventFrame(event, epoch, out);
}

void SseFrameCache::Append(uint64_t owner, const Event& event, uint64_t epoch,
                           std::string& out) {
  if (event.sequence == 0) return AppendSseFrame(event, epoch, out);
  // Streams are mixed in so that two streams' same sequence do not evict each
  // other, while one stream's consecutive events use consecutive slots.
  const size_t index =
      (absl::Hash<absl::string_view>()(event.stream) + event.sequence) % slots_.size();
  Slot& slot = slots_[index];
  if (slot.owner != owner || slot.epoch != epoch || slot.sequence != event.sequence ||
      slot.stream != event.stream) {
    slot.owner = owner;
    slot.epoch = epoch;
    slot.sequence = event.sequence;
    slot.stream = event.stream;
    slot.frame.clear();
    AppendSseFrame(event, epoch, slot.frame);
  }
  out += slot.frame;
}

SseFrameCache& ThreadSseFrameCache() {
  thread_local SseFrameCache cache;
  return cache;
}

std::string SsePreamble(absl::Duration retry, const std::string& cors_origin) {
  std::string head =
      "HTTP/1.1 200 OK\r\n"
      "Content-Type: text/event-stream\r\n"
      "Cache-Control: no-cache\r\n"
      "Connection: keep-alive\r\n"
      "X-Accel-Buffering: no\r\n";
  if (!cors_origin.empty()) absl::StrAppend(&head, "Access-Control-Allow-Origin: ", cors_origin, "\r\n");
  absl::StrAppend(&head, "\r\nretry: ", absl::ToInt64Milliseconds(retry), "\n\n");
  return head;
}

}  // namespace keel::server
