// Raw JSON slicing: the exact text of a member or of array elements of a
// JSON document, without re-serialising it. The CLI prints events exactly as
// the daemon sent them (a DOM round trip would rewrite numbers such as 1.0
// as 1E0 inside event data).
//
// The input must be valid JSON (parse it first); these functions only find
// boundaries and never validate.
//
// Thread safety: pure functions.
#ifndef KEEL_CMD_KEEL_CLIENT_RAW_JSON_H_
#define KEEL_CMD_KEEL_CLIENT_RAW_JSON_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace keel::client {

// The raw text of the value of member `key` of the top-level object.
std::optional<absl::string_view> RawMember(absl::string_view object, absl::string_view key);

// Like RawMember, but only when that text is surely the value a JSON parser
// keeps for `key`: nullopt also when the name occurs twice, or when some
// name is written with escapes (it might spell `key`).
std::optional<absl::string_view> RawUniqueMember(absl::string_view object, absl::string_view key);

// The raw texts of the elements of a JSON array (empty if `array` is not one).
std::vector<absl::string_view> RawElements(absl::string_view array);

// `value` without the whitespace between its tokens; strings, numbers and
// literals are kept as written.
std::string RawCompact(absl::string_view value);

}  // namespace keel::client

#endif  // KEEL_CMD_KEEL_CLIENT_RAW_JSON_H_
