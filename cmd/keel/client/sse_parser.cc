#include "keel/cmd/keel/client/sse_parser.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"

namespace keel::client {

void SseParser::Feed(absl::string_view bytes) {
  if (at_start_ && !bytes.empty()) {
    // The BOM may itself arrive in pieces; wait until 3 bytes are known.
    partial_.append(bytes.data(), bytes.size());
    if (partial_.size() < 3 && absl::StartsWith("\xEF\xBB\xBF", partial_)) return;
    at_start_ = false;
    std::string pending = std::move(partial_);
    partial_.clear();
    absl::string_view rest = pending;
    absl::ConsumePrefix(&rest, "\xEF\xBB\xBF");
    Feed(rest);
    return;
  }
  size_t pos = 0;
  while (pos < bytes.size()) {
    if (skip_lf_) {
      skip_lf_ = false;
      if (bytes[pos] == '\n') {
        ++pos;
        continue;
      }
    }
    const size_t end = bytes.find_first_of("\r\n", pos);
    if (end == absl::string_view::npos) {
      partial_.append(bytes.data() + pos, bytes.size() - pos);
      return;
    }
    if (partial_.empty()) {
      ProcessLine(bytes.substr(pos, end - pos));
    } else {
      partial_.append(bytes.data() + pos, end - pos);
      std::string line = std::move(partial_);
      partial_.clear();
      ProcessLine(line);
    }
    skip_lf_ = bytes[end] == '\r';
    pos = end + 1;
  }
}

std::optional<SseFrame> SseParser::Pop() {
  if (ready_.empty()) return std::nullopt;
  SseFrame frame = std::move(ready_.front());
  ready_.pop_front();
  return frame;
}

void SseParser::ProcessLine(absl::string_view line) {
  if (line.empty()) return Dispatch();
  current_started_ = true;
  absl::string_view field = line;
  absl::string_view value;
  const size_t colon = line.find(':');
  if (colon != absl::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    absl::ConsumePrefix(&value, " ");
  }
  if (colon == 0) {
    current_.comments.emplace_back(value);
  } else if (field == "data") {
    if (current_.has_data) current_.data.push_back('\n');
    current_.data.append(value.data(), value.size());
    current_.has_data = true;
  } else if (field == "event") {
    current_.event = std::string(value);
  } else if (field == "id") {
    if (value.find('\0') == absl::string_view::npos) {
      current_.id = std::string(value);
      last_event_id_ = std::string(value);
    }
  } else if (field == "retry") {
    int64_t retry = 0;
    if (!value.empty() &&
        std::all_of(value.begin(), value.end(), [](char c) { return absl::ascii_isdigit(c); }) &&
        absl::SimpleAtoi(value, &retry)) {
      current_.retry_ms = retry;
    }
  }
}

void SseParser::Dispatch() {
  if (current_started_) ready_.push_back(std::move(current_));
  current_ = SseFrame();
  current_started_ = false;
}

}  // namespace keel::client
