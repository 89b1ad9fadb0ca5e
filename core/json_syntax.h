// IsJsonText: whether bytes are one JSON text (RFC 8259, UTF-8), checked by
// a streaming parser that builds nothing, so checking a document costs no
// allocation (a collection checks every document it stores).
//
// Thread safety: a pure function.
#ifndef KEEL_CORE_JSON_SYNTAX_H_
#define KEEL_CORE_JSON_SYNTAX_H_

#include <string>

#include "absl/strings/string_view.h"

namespace keel {

// Nesting deeper than this is refused, as protobuf's JSON reader does.
inline constexpr int kMaxJsonDepth = 100;

// True when `text` is one JSON value (surrounding whitespace allowed);
// otherwise false, with what is wrong in `*error` when given.
bool IsJsonText(absl::string_view text, std::string* error = nullptr);

}  // namespace keel

#endif  // KEEL_CORE_JSON_SYNTAX_H_
