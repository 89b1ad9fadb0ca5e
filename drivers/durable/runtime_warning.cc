#include "drivers/durable/runtime_warning.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace keel::durable {
namespace {

// The message as a JSON string's contents: messages are printable ASCII,
// so quotes and backslashes are all there is to escape.
std::string JsonEscaped(absl::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
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
