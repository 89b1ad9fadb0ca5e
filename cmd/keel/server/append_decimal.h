// Internal: AppendDecimal writes a number's digits straight onto a string.
//
// Responses and receipts are built with appends; absl::StrAppend with a
// number built an AlphaNum and went through its general piece-joining path,
// which cost more than the digits themselves.
//
// Thread safety: a pure function.
#ifndef KEEL_CMD_KEEL_SERVER_APPEND_DECIMAL_H_
#define KEEL_CMD_KEEL_SERVER_APPEND_DECIMAL_H_

#include <charconv>
#include <cstdint>
#include <string>

namespace keel::server {

inline void AppendDecimal(uint64_t value, std::string& out) {
  char digits[20];  // 2^64 - 1 has 20 digits.
  out.append(digits, std::to_chars(digits, digits + sizeof(digits), value).ptr);
}

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_APPEND_DECIMAL_H_
