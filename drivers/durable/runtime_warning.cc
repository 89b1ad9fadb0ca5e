#include "keel/drivers/durable/runtime_warning.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace keel::durable {
namespace {

// The message as a JSON string's contents (RFC 8259: quote, backslash and
// control characters escaped).
std::string JsonEscaped(absl::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppend(&out, "\\u", absl::Hex(static_cast<unsigned>(c), absl::kZeroPad4));
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

Event RuntimeWarning(absl::string_view message) {
  Event warning;
  warning.stream = kRuntimeStream;
  warning.type = kRuntimeWarningType;
  warning.content_type = "application/json";
  warning.payload =
      absl::StrCat("{\"driver\":\"durable\",\"message\":\"", JsonEscaped(message), "\"}");
  return warning;
}

}  // namespace keel::durable
