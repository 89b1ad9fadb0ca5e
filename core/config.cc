#include "keel/core/config.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"

namespace keel {

std::string Config::GetString(absl::string_view key, absl::string_view fallback) const {
  auto it = values_.find(std::string(key));
  return it == values_.end() ? std::string(fallback) : it->second;
}

absl::StatusOr<uint64_t> Config::GetUint(absl::string_view key, uint64_t fallback, uint64_t min,
                                         uint64_t max) const {
  auto it = values_.find(std::string(key));
  if (it == values_.end()) return fallback;
  uint64_t value = 0;
  if (!absl::SimpleAtoi(it->second, &value)) {
    return InvalidArgument(
        absl::StrCat("option '", key, "': '", it->second, "' is not a non-negative integer"));
  }
  if (value < min || value > max) {
    return InvalidArgument(absl::StrCat("option '", key, "': ", value, " is outside [", min, ", ",
                                        max, "]"));
  }
  return value;
}

absl::StatusOr<bool> Config::GetBool(absl::string_view key, bool fallback) const {
  auto it = values_.find(std::string(key));
  if (it == values_.end()) return fallback;
  bool value = false;
  if (!absl::SimpleAtob(it->second, &value)) {
    return InvalidArgument(absl::StrCat("option '", key, "': '", it->second, "' is not a boolean"));
  }
  return value;
}

absl::StatusOr<absl::Duration> Config::GetDuration(absl::string_view key,
                                                   absl::Duration fallback) const {
  auto it = values_.find(std::string(key));
  if (it == values_.end()) return fallback;
  absl::Duration value;
  if (!absl::ParseDuration(it->second, &value) || value < absl::ZeroDuration()) {
    return InvalidArgument(absl::StrCat("option '", key, "': '", it->second,
                                        "' is not a duration such as 250ms, 2s or 5m"));
  }
  return value;
}

absl::Status Config::SetFromAssignment(absl::string_view assignment) {
  const size_t eq = assignment.find('=');
  const absl::string_view key =
      eq == absl::string_view::npos ? "" : absl::StripAsciiWhitespace(assignment.substr(0, eq));
  if (key.empty()) {
    return InvalidArgument(absl::StrCat("expected key=value, got '", assignment, "'"));
  }
  Set(key, absl::StripAsciiWhitespace(assignment.substr(eq + 1)));
  return absl::OkStatus();
}

}  // namespace keel
