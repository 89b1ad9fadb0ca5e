// Cursor tokens (rfcs/0002-cursor.md): shape, round trip, tamper and version
// detection, and Position parsing.
#include "keel/core/cursor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "keel/core/errors.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel {
namespace {

using ::keel::testing::HasErrorKind;
using ::keel::testing::IsOk;
using ::testing::HasSubstr;

const std::vector<Cursor> kSamples = {
    Cursor{0, 0, 0},
    Cursor{1, StreamFingerprint("orders"), 42},
    Cursor{UINT64_MAX, UINT64_MAX, UINT64_MAX},
    Cursor{0x0123456789abcdefull, StreamFingerprint("a.b:c-d_e"), 1ull << 40},
};

// Builds a token from raw fields the way rfcs/0002-cursor.md specifies, so
// tests can craft tokens the encoder would never produce (e.g. version 2).
std::string RawToken(uint8_t version, const Cursor& c) {
  std::string body(1, static_cast<char>(version));
  for (uint64_t v : {c.epoch, c.stream_tag, c.sequence}) {
    for (int shift = 56; shift >= 0; shift -= 8) body.push_back(static_cast<char>(v >> shift));
  }
  uint32_t hash = 2166136261u;  // FNV-1a 32 over the 25-byte body...
  for (char ch : body) {
    hash ^= static_cast<uint8_t>(ch);
    hash *= 16777619u;
  }
  uint16_t check = static_cast<uint16_t>((hash >> 16) ^ (hash & 0xffff));  // ...folded.
  body.push_back(static_cast<char>(check >> 8));
  body.push_back(static_cast<char>(check & 0xff));
  return absl::WebSafeBase64Escape(body);
}

bool IsUrlSafe(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

TEST(StreamFingerprintTest, IsFnv1a64) {
  EXPECT_EQ(StreamFingerprint(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(StreamFingerprint("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_NE(StreamFingerprint("orders"), StreamFingerprint("Orders"));
}

TEST(CursorTest, ForFillsFingerprint) {
  Cursor cursor = Cursor::For("orders", 7, 9);
  EXPECT_EQ(cursor, (Cursor{7, StreamFingerprint("orders"), 9}));
}

TEST(CursorTest, TokenIs36UrlSafeCharacters) {
  for (const Cursor& cursor : kSamples) {
    std::string token = cursor.Encode();
    EXPECT_EQ(token.size(), 36u) << token;
    for (char c : token) EXPECT_TRUE(IsUrlSafe(c)) << "'" << c << "' in " << token;
  }
}

TEST(CursorTest, EncodeDecodeRoundTrips) {
  for (const Cursor& cursor : kSamples) {
    absl::StatusOr<Cursor> decoded = Cursor::Decode(cursor.Encode());
    ASSERT_THAT(decoded, IsOk());
    EXPECT_EQ(*decoded, cursor);
  }
}

TEST(CursorTest, MatchesTheSpecifiedLayout) {
  for (const Cursor& cursor : kSamples) EXPECT_EQ(cursor.Encode(), RawToken(1, cursor));
}

TEST(CursorTest, DistinctCursorsHaveDistinctTokens) {
  EXPECT_NE(Cursor::For("s", 1, 1).Encode(), Cursor::For("s", 1, 2).Encode());
  EXPECT_NE(Cursor::For("s", 1, 1).Encode(), Cursor::For("s", 2, 1).Encode());
  EXPECT_NE(Cursor::For("s", 1, 1).Encode(), Cursor::For("t", 1, 1).Encode());
}

TEST(CursorTest, EverySingleCharacterEditIsDetected) {
  // The check is 16 bits, so detection of arbitrary edits is probabilistic;
  // for these tokens every one-character edit must be caught.
  for (const Cursor& cursor : kSamples) {
    const std::string token = cursor.Encode();
    for (size_t i = 0; i < token.size(); ++i) {
      for (char replacement : {'A', 'z', '0', '-', '_'}) {
        if (token[i] == replacement) continue;
        std::string edited = token;
        edited[i] = replacement;
        EXPECT_THAT(Cursor::Decode(edited), HasErrorKind(ErrorKind::kInvalidCursor))
            << "edit at " << i << " of " << token;
      }
    }
  }
}

TEST(CursorTest, MalformedTokensAreInvalidCursor) {
  const std::string token = Cursor::For("s", 3, 4).Encode();
  std::string standard_alphabet = token;
  standard_alphabet[5] = '+';  // Standard base64, not URL-safe.
  for (const std::string& bad :
       {std::string(), std::string("x"), token.substr(0, 35), token + "A",
        token + "==", standard_alphabet, std::string(36, '!'), std::string(36, '=')}) {
    EXPECT_THAT(Cursor::Decode(bad), HasErrorKind(ErrorKind::kInvalidCursor)) << bad;
  }
}

TEST(CursorTest, UnknownVersionIsInvalidCursor) {
  const Cursor cursor = Cursor::For("s", 3, 4);
  ASSERT_THAT(Cursor::Decode(RawToken(1, cursor)), IsOk());
  for (uint8_t version : {0, 2, 255}) {
    absl::StatusOr<Cursor> decoded = Cursor::Decode(RawToken(version, cursor));
    EXPECT_THAT(decoded, HasErrorKind(ErrorKind::kInvalidCursor));
    EXPECT_THAT(decoded.status().message(), HasSubstr("version"));
  }
}

TEST(CursorTest, CheckBelongsTo) {
  const Cursor cursor = Cursor::For("orders", 5, 10);
  EXPECT_THAT(cursor.CheckBelongsTo("orders", 5), IsOk());
  EXPECT_THAT(cursor.CheckBelongsTo("users", 5), HasErrorKind(ErrorKind::kCursorMismatch));
  absl::Status other_epoch = cursor.CheckBelongsTo("orders", 6);
  EXPECT_THAT(other_epoch, HasErrorKind(ErrorKind::kCursorMismatch));
  EXPECT_THAT(other_epoch.message(), HasSubstr("epoch"));
}

TEST(PositionTest, ParsesSymbolicPositions) {
  absl::StatusOr<Position> earliest = Position::Parse("earliest");
  absl::StatusOr<Position> latest = Position::Parse("latest");
  ASSERT_THAT(earliest, IsOk());
  ASSERT_THAT(latest, IsOk());
  EXPECT_EQ(earliest->kind, Position::Kind::kEarliest);
  EXPECT_EQ(latest->kind, Position::Kind::kLatest);
}

TEST(PositionTest, ParsesCursorTokens) {
  const Cursor cursor = Cursor::For("s", 9, 99);
  absl::StatusOr<Position> position = Position::Parse(cursor.Encode());
  ASSERT_THAT(position, IsOk());
  EXPECT_EQ(position->kind, Position::Kind::kCursor);
  EXPECT_EQ(position->cursor, cursor);
}

TEST(PositionTest, ToStringRoundTrips) {
  for (const Position& position :
       {Position::Earliest(), Position::Latest(), Position::After(Cursor::For("s", 1, 2))}) {
    absl::StatusOr<Position> parsed = Position::Parse(position.ToString());
    ASSERT_THAT(parsed, IsOk()) << position.ToString();
    EXPECT_EQ(parsed->kind, position.kind);
    EXPECT_EQ(parsed->cursor, position.cursor);
  }
  EXPECT_EQ(Position::Earliest().ToString(), "earliest");
  EXPECT_EQ(Position::Latest().ToString(), "latest");
}

TEST(PositionTest, SymbolicNamesAreCaseSensitive) {
  for (const char* text : {"Earliest", "LATEST", " earliest", "latest ", "first"}) {
    EXPECT_THAT(Position::Parse(text), HasErrorKind(ErrorKind::kInvalidCursor)) << text;
  }
}

TEST(PositionTest, DefaultIsLatest) { EXPECT_EQ(Position().kind, Position::Kind::kLatest); }

}  // namespace
}  // namespace keel
