// Cursor tokens and read positions as clients send them (?after=,
// Last-Event-ID, the CLI's --after): decoding never fails other than with
// kInvalidCursor, and a token that decodes is the one its cursor encodes
// to, so a cursor has exactly one spelling.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/string_view.h"
#include "keel/core/cursor.h"
#include "keel/core/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<keel::Cursor> cursor = keel::Cursor::Decode(text);
  if (cursor.ok()) {
    if (cursor->Encode() != text) std::abort();
    if (keel::Cursor::Decode(cursor->Encode()).value() != *cursor) std::abort();
  } else if (keel::GetErrorKind(cursor.status()) != keel::ErrorKind::kInvalidCursor) {
    std::abort();
  }
  absl::StatusOr<keel::Position> position = keel::Position::Parse(text);
  if (position.ok() && position->ToString() != text) std::abort();
  return 0;
}
