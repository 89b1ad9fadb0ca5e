#include "cmd/keel/server/sse_frames.h"

#include "absl/hash/hash.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cmd/keel/server/json_codec.h"

namespace keel::server {
namespace {

void AppendData(absl::string_view data, std::string& out) {
  out += "data: ";
  for (char c : data) {
    if (c == '\r') continue;
    if (c == '\n') {
      out += "\ndata: ";
    } else {
      out.push_back(c);
    }
  }
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
  absl::StrAppend(&out, "id: ", Cursor::For(event.stream, epoch, event.sequence).Encode(),
                  "\nevent: ", event.type, "\n");
  std::string json;
  AppendEventJson(event, epoch, json);
  AppendData(json, out);
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
