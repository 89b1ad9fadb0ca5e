// Cursor: an opaque, URL-safe position in one stream of one store.
//
// A cursor names the position *at* an event (or before the first event when
// its sequence is 0); reads "after" a cursor return strictly later events. It
// encodes the stream's fingerprint and the store's epoch next to the sequence,
// so a cursor presented to another stream, or to a store that was wiped and
// recreated, is detected (kCursorMismatch) rather than misread. The token is
// printable and URL-safe so it can be used verbatim as an SSE `id:` and a
// query parameter. Format: rfcs/0002-cursor.md.
//
// `Position` adds the symbolic positions `earliest` (before the oldest
// retained event) and `latest` (the stream's current head).
//
// Thread safety: plain value types; functions are pure.
#ifndef KEEL_CORE_CURSOR_H_
#define KEEL_CORE_CURSOR_H_

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace keel {

// 64-bit FNV-1a of the stream name; the stream identity inside a cursor.
uint64_t StreamFingerprint(absl::string_view stream);

struct Cursor {
  uint64_t epoch = 0;        // Store epoch: changes when a store is recreated.
  uint64_t stream_tag = 0;   // StreamFingerprint(stream).
  uint64_t sequence = 0;     // Position at this sequence; 0 = before the first.

  static Cursor For(absl::string_view stream, uint64_t epoch, uint64_t sequence) {
    return Cursor{epoch, StreamFingerprint(stream), sequence};
  }

  // Length of every token.
  static constexpr size_t kTokenSize = 36;

  // The printable token.
  std::string Encode() const;
  // The same token held by value (no string): for the frames and receipts
  // built once per event.
  class Token {
   public:
    absl::string_view view() const { return absl::string_view(chars_, kTokenSize); }

   private:
    friend struct Cursor;
    char chars_[kTokenSize];
  };
  Token EncodeToken() const;
  // Parses a token; kInvalidCursor when it is malformed or fails its check.
  static absl::StatusOr<Cursor> Decode(absl::string_view token);

  // kCursorMismatch unless this cursor belongs to `stream` in a store of
  // `epoch`.
  absl::Status CheckBelongsTo(absl::string_view stream, uint64_t epoch) const;

  friend bool operator==(const Cursor&, const Cursor&) = default;
};

// A read position: a concrete cursor or a symbolic end of the stream.
struct Position {
  enum class Kind { kEarliest, kLatest, kCursor };
  Kind kind = Kind::kLatest;
  Cursor cursor;  // Meaningful when kind == kCursor.

  static Position Earliest() { return Position{Kind::kEarliest, {}}; }
  static Position Latest() { return Position{Kind::kLatest, {}}; }
  static Position After(const Cursor& c) { return Position{Kind::kCursor, c}; }

  // Parses "earliest", "latest" or a cursor token.
  static absl::StatusOr<Position> Parse(absl::string_view text);
  std::string ToString() const;
};

}  // namespace keel

#endif  // KEEL_CORE_CURSOR_H_
