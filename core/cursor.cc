// Cursor token format (rfcs/0002-cursor.md):
//
//   token = base64url-without-padding(body)          36 characters
//   body  = version:u8 (=1)
//           epoch:u64be  stream_tag:u64be  sequence:u64be
//           check:u16be                                27 bytes
//
// `check` is the 32-bit FNV-1a of the first 25 bytes folded to 16 bits
// (high half XOR low half). It catches truncated or edited tokens, so a typo
// is an invalid_cursor error rather than a position somewhere else.
#include "keel/core/cursor.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"
#include "keel/core/fnv.h"

namespace keel {
namespace {

constexpr uint8_t kVersion = 1;
constexpr size_t kBodySize = 1 + 8 + 8 + 8;
constexpr size_t kTokenBytes = kBodySize + 2;
static_assert(kTokenBytes / 3 * 4 == Cursor::kTokenSize, "27 bytes are 36 base64 characters");

void PutU64(uint8_t* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(v >> (56 - 8 * i));
}

uint64_t GetU64(absl::string_view in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(in[i]);
  return v;
}

uint16_t Check(absl::string_view body) {
  const uint32_t hash = Fnv1a32(body);
  return static_cast<uint16_t>((hash >> 16) ^ (hash & 0xffff));
}

}  // namespace

uint64_t StreamFingerprint(absl::string_view stream) { return Fnv1a64(stream); }

std::string Cursor::Encode() const { return std::string(EncodeToken().view()); }

// By hand rather than through absl::WebSafeBase64Escape: every SSE frame and
// every event in a page carries a token, and the escape's temporary strings
// were a measurable part of building them. 27 bytes are 9 whole groups of
// three, so the token never needs padding.
Cursor::Token Cursor::EncodeToken() const {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  Token token;
  uint8_t body[kTokenBytes];
  body[0] = kVersion;
  PutU64(body + 1, epoch);
  PutU64(body + 9, stream_tag);
  PutU64(body + 17, sequence);
  const uint16_t check =
      Check(absl::string_view(reinterpret_cast<const char*>(body), kBodySize));
  body[kBodySize] = static_cast<uint8_t>(check >> 8);
  body[kBodySize + 1] = static_cast<uint8_t>(check & 0xff);
  for (size_t in = 0, at = 0; in < kTokenBytes; in += 3, at += 4) {
    const uint32_t group = (uint32_t{body[in]} << 16) | (uint32_t{body[in + 1]} << 8) | body[in + 2];
    token.chars_[at] = kAlphabet[group >> 18];
    token.chars_[at + 1] = kAlphabet[(group >> 12) & 63];
    token.chars_[at + 2] = kAlphabet[(group >> 6) & 63];
    token.chars_[at + 3] = kAlphabet[group & 63];
  }
  return token;
}

absl::StatusOr<Cursor> Cursor::Decode(absl::string_view token) {
  std::string body;
  if (token.size() != Cursor::kTokenSize || !absl::WebSafeBase64Unescape(token, &body) ||
      body.size() != kTokenBytes) {
    return InvalidCursor(absl::StrCat("malformed cursor '", token.substr(0, 64), "'"));
  }
  if (static_cast<uint8_t>(body[0]) != kVersion) {
    return InvalidCursor(absl::StrCat("unsupported cursor version ",
                                      static_cast<uint8_t>(body[0])));
  }
  uint16_t check = (static_cast<uint8_t>(body[kBodySize]) << 8) |
                   static_cast<uint8_t>(body[kBodySize + 1]);
  if (check != Check(absl::string_view(body).substr(0, kBodySize))) {
    return InvalidCursor(absl::StrCat("corrupt cursor '", token, "' (check failed)"));
  }
  absl::string_view view(body);
  return Cursor{GetU64(view.substr(1)), GetU64(view.substr(9)), GetU64(view.substr(17))};
}

absl::Status Cursor::CheckBelongsTo(absl::string_view stream, uint64_t store_epoch) const {
  if (stream_tag != StreamFingerprint(stream)) {
    return CursorMismatch(absl::StrCat("cursor belongs to another stream, not '", stream, "'"));
  }
  if (epoch != store_epoch) {
    return CursorMismatch(absl::StrCat("cursor for stream '", stream,
                                       "' comes from another store epoch (", epoch,
                                       "; current ", store_epoch,
                                       "): the store was recreated"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Position> Position::Parse(absl::string_view text) {
  if (text == "earliest") return Earliest();
  if (text == "latest") return Latest();
  absl::StatusOr<Cursor> cursor = Cursor::Decode(text);
  if (!cursor.ok()) return cursor.status();
  return After(*cursor);
}

std::string Position::ToString() const {
  switch (kind) {
    case Kind::kEarliest:
      return "earliest";
    case Kind::kLatest:
      return "latest";
    case Kind::kCursor:
      return cursor.Encode();
  }
  return "";
}

}  // namespace keel
