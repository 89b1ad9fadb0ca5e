#include "keel/cmd/keel/client/raw_json.h"

#include <cstring>

#include "absl/functional/function_ref.h"

namespace keel::client {
namespace {

// JSON's whitespace (RFC 8259): the input is valid JSON, so nothing else
// can separate its tokens.
bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t SkipSpace(absl::string_view text, size_t pos) {
  while (pos < text.size() && IsJsonSpace(text[pos])) ++pos;
  return pos;
}

// Position just past the string starting at `pos` (a quote). Looks for
// quotes with memchr rather than stepping a byte at a time (most of an
// event's bytes are in strings): a quote closes the string unless an odd
// number of backslashes precedes it.
size_t SkipString(absl::string_view text, size_t pos) {
  const size_t first = pos + 1;
  for (size_t from = first; from < text.size();) {
    const void* found = memchr(text.data() + from, '"', text.size() - from);
    if (found == nullptr) break;
    const size_t quote = static_cast<size_t>(static_cast<const char*>(found) - text.data());
    size_t backslashes = 0;
    while (quote - backslashes > first && text[quote - backslashes - 1] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return quote + 1;
    from = quote + 1;
  }
  return text.size();
}

// Position just past the value starting at `pos`.
size_t SkipValue(absl::string_view text, size_t pos) {
  if (pos >= text.size()) return pos;
  if (text[pos] == '"') return SkipString(text, pos);
  if (text[pos] == '{' || text[pos] == '[') {
    int depth = 0;
    while (pos < text.size()) {
      const char c = text[pos];
      if (c == '"') {
        pos = SkipString(text, pos);
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        if (--depth == 0) return pos + 1;
      }
      ++pos;
    }
    return pos;
  }
  while (pos < text.size() && text[pos] != ',' && text[pos] != '}' && text[pos] != ']' &&
         !IsJsonSpace(text[pos])) {
    ++pos;
  }
  return pos;
}

// Calls `visit(name, raw value)` for the members of the top-level object in
// order, until it returns false.
void ForEachMember(absl::string_view object,
                   absl::FunctionRef<bool(absl::string_view, absl::string_view)> visit) {
  size_t pos = SkipSpace(object, 0);
  if (pos >= object.size() || object[pos] != '{') return;
  pos = SkipSpace(object, pos + 1);
  while (pos < object.size() && object[pos] == '"') {
    const size_t key_end = SkipString(object, pos);
    const absl::string_view name = object.substr(pos + 1, key_end - pos - 2);
    pos = SkipSpace(object, key_end);
    if (pos >= object.size() || object[pos] != ':') return;
    pos = SkipSpace(object, pos + 1);
    const size_t value_end = SkipValue(object, pos);
    if (!visit(name, object.substr(pos, value_end - pos))) return;
    pos = SkipSpace(object, value_end);
    if (pos < object.size() && object[pos] == ',') pos = SkipSpace(object, pos + 1);
  }
}

}  // namespace

std::optional<absl::string_view> RawMember(absl::string_view object, absl::string_view key) {
  std::optional<absl::string_view> found;
  ForEachMember(object, [&](absl::string_view name, absl::string_view value) {
    if (name == key) found = value;
    return !found.has_value();
  });
  return found;
}

std::optional<absl::string_view> RawUniqueMember(absl::string_view object, absl::string_view key) {
  std::optional<absl::string_view> found;
  bool ambiguous = false;
  ForEachMember(object, [&](absl::string_view name, absl::string_view value) {
    ambiguous = name.find('\\') != absl::string_view::npos || (name == key && found.has_value());
    if (name == key) found = value;
    return !ambiguous;
  });
  if (ambiguous) return std::nullopt;
  return found;
}

std::vector<absl::string_view> RawElements(absl::string_view array) {
  std::vector<absl::string_view> elements;
  size_t pos = SkipSpace(array, 0);
  if (pos >= array.size() || array[pos] != '[') return elements;
  pos = SkipSpace(array, pos + 1);
  while (pos < array.size() && array[pos] != ']') {
    const size_t end = SkipValue(array, pos);
    if (end == pos) break;
    elements.push_back(array.substr(pos, end - pos));
    pos = SkipSpace(array, end);
    if (pos < array.size() && array[pos] == ',') pos = SkipSpace(array, pos + 1);
  }
  return elements;
}

std::string RawCompact(absl::string_view value) {
  std::string out;
  out.reserve(value.size());
  size_t pos = 0;
  while (pos < value.size()) {
    size_t end = pos;
    if (value[pos] == '"') {
      end = SkipString(value, pos);
    } else if (IsJsonSpace(value[pos])) {
      ++pos;
      continue;
    } else {
      while (end < value.size() && value[end] != '"' && !IsJsonSpace(value[end])) ++end;
    }
    out.append(value.data() + pos, end - pos);  // A string or a run of other tokens.
    pos = end;
  }
  return out;
}

}  // namespace keel::client
