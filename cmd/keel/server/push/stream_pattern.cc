#include "keel/cmd/keel/server/push/stream_pattern.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/push/subscription_log.h"
#include "keel/core/errors.h"

namespace keel::push {
namespace {

bool NameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == ':' || c == '-';
}

// Classic glob matching with backtracking to the last `*`: linear enough
// for names of at most 255 bytes.
bool GlobMatches(absl::string_view glob, absl::string_view name) {
  size_t g = 0, n = 0, star = absl::string_view::npos, resume = 0;
  while (n < name.size()) {
    if (g < glob.size() && (glob[g] == '?' || glob[g] == name[n])) {
      ++g;
      ++n;
    } else if (g < glob.size() && glob[g] == '*') {
      star = g++;
      resume = n;
    } else if (star != absl::string_view::npos) {
      g = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (g < glob.size() && glob[g] == '*') ++g;
  return g == glob.size();
}

}  // namespace

absl::StatusOr<StreamPattern> StreamPattern::Parse(absl::string_view text) {
  if (text.empty() || text.size() > 255) {
    return InvalidArgument("stream pattern must be 1 to 255 characters");
  }
  for (char c : text) {
    if (!NameChar(c) && c != '*' && c != '?') {
      return InvalidArgument(
          absl::StrCat("stream pattern '", text, "' may hold [A-Za-z0-9._:-], '*' and '?' only"));
    }
  }
  StreamPattern pattern;
  pattern.text_ = std::string(text);
  const size_t wild = text.find_first_of("*?");
  pattern.prefix_ = std::string(text.substr(0, wild));
  if (wild == absl::string_view::npos) {
    pattern.kind_ = Kind::kExact;
  } else if (wild == text.size() - 1 && text.back() == '*') {
    pattern.kind_ = Kind::kPrefix;
  } else {
    pattern.kind_ = Kind::kGlob;
  }
  return pattern;
}

bool StreamPattern::Matches(absl::string_view stream) const {
  if (IsReservedForPush(stream)) return false;
  switch (kind_) {
    case Kind::kExact:
      return stream == text_;
    case Kind::kPrefix:
      return absl::StartsWith(stream, prefix_);
    case Kind::kGlob:
      return GlobMatches(text_, stream);
  }
  return false;
}

bool IsReservedForPush(absl::string_view stream) {
  return absl::EndsWith(stream, ".dlq") || stream == kSubscriptionLogStream;
}

}  // namespace keel::push
