// StreamPattern: which streams a push subscription follows — one stream by
// name ("orders"), every stream whose name starts with a prefix
// ("orders.*", a trailing ".*" or "*" after a literal), or a glob with `*`
// (any run of characters, also none) and `?` (one character) anywhere
// ("orders.*.eu", "*").
//
// Dead-letter streams ("….dlq") and the subscriptions' own record stream
// never match: a subscription delivering its own failures, or its own
// declarations, would loop.
//
// Thread safety: a plain value type.
#ifndef KEEL_CMD_KEEL_SERVER_PUSH_STREAM_PATTERN_H_
#define KEEL_CMD_KEEL_SERVER_PUSH_STREAM_PATTERN_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace keel::push {

class StreamPattern {
 public:
  enum class Kind { kExact, kPrefix, kGlob };

  // kInvalidArgument for an empty pattern or characters no stream name has
  // ([A-Za-z0-9._:-] besides `*` and `?`).
  static absl::StatusOr<StreamPattern> Parse(absl::string_view text);

  bool Matches(absl::string_view stream) const;
  Kind kind() const { return kind_; }
  // The literal start every matching stream shares (the whole name for an
  // exact pattern): what to list streams by.
  const std::string& literal_prefix() const { return prefix_; }
  const std::string& text() const { return text_; }

  friend bool operator==(const StreamPattern& a, const StreamPattern& b) {
    return a.text_ == b.text_;
  }

 private:
  std::string text_;
  Kind kind_ = Kind::kExact;
  std::string prefix_;
};

// Whether `stream` is one no subscription may follow (dead letters, the
// subscriptions' record stream).
bool IsReservedForPush(absl::string_view stream);

}  // namespace keel::push

#endif  // KEEL_CMD_KEEL_SERVER_PUSH_STREAM_PATTERN_H_
