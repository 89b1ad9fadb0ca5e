// Cursor validation: a cursor is only accepted by the stream and store epoch
// it came from and only up to the stream's head; malformed tokens are
// invalid_cursor. Checked on both read paths (Replay and Follow).
#include <gmock/gmock.h>

#include <string>
#include <vector>

#include "keel/core/errors.h"
#include "keel/tests/conformance/conformance.h"
#include "keel/tests/conformance/helpers.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::conformance {

void LinkCursorTests() {}

namespace {

using ::keel::testing::HasErrorKind;

// Expects both Replay and Follow of `stream` after `cursor` to fail with `kind`.
void ExpectRejected(EventBus& bus, absl::string_view stream, const Cursor& cursor, ErrorKind kind) {
  ReplayRequest request;
  request.stream = std::string(stream);
  request.after = Position::After(cursor);
  EXPECT_THAT(bus.replayer()->Replay(request), HasErrorKind(kind)) << "Replay";
  EXPECT_THAT(bus.Follow(stream, Position::After(cursor)), HasErrorKind(kind)) << "Follow";
}

TEST_P(CursorConformanceTest, CursorOfAnotherStreamIsMismatch) {
  ASSERT_OK(PublishN(bus(), "mine", 5));
  ASSERT_OK_AND_ASSIGN(std::vector<Receipt> theirs, PublishN(bus(), "theirs", 5));
  ExpectRejected(bus(), "mine", theirs[1].cursor, ErrorKind::kCursorMismatch);
}

TEST_P(CursorConformanceTest, CursorOfAnotherEpochIsMismatch) {
  ASSERT_OK_AND_ASSIGN(std::vector<Receipt> receipts, PublishN(bus(), "s", 5));
  Cursor other = receipts[1].cursor;
  other.epoch += 1;  // As if the store had been wiped and recreated.
  ExpectRejected(bus(), "s", other, ErrorKind::kCursorMismatch);
}

TEST_P(CursorConformanceTest, CursorBeyondHeadIsMismatch) {
  ASSERT_OK(PublishN(bus(), "s", 3));
  ExpectRejected(bus(), "s", Cursor::For("s", epoch(), 4), ErrorKind::kCursorMismatch);
  ExpectRejected(bus(), "s", Cursor::For("s", epoch(), 1000), ErrorKind::kCursorMismatch);
  ExpectRejected(bus(), "empty", Cursor::For("empty", epoch(), 1), ErrorKind::kCursorMismatch);
}

TEST_P(CursorConformanceTest, CursorAtHeadAndAtZeroAreAccepted) {
  ASSERT_OK(PublishN(bus(), "s", 3));
  ReplayRequest request;
  request.stream = "s";
  request.after = Position::After(Cursor::For("s", epoch(), 3));
  EXPECT_OK(replayer().Replay(request));
  request.after = Position::After(Cursor::For("s", epoch(), 0));
  ASSERT_OK_AND_ASSIGN(ReplayPage page, replayer().Replay(request));
  EXPECT_EQ(Sequences(page.events), Range(1, 3)) << "a cursor at 0 is before the first event";
}

TEST_P(CursorConformanceTest, UntilOfAnotherStreamOrEpochIsMismatch) {
  ASSERT_OK_AND_ASSIGN(std::vector<Receipt> mine, PublishN(bus(), "mine", 5));
  ASSERT_OK_AND_ASSIGN(std::vector<Receipt> theirs, PublishN(bus(), "theirs", 5));
  ReplayRequest request;
  request.stream = "mine";
  request.after = Position::Earliest();
  request.until = theirs[2].cursor;
  EXPECT_THAT(replayer().Replay(request), HasErrorKind(ErrorKind::kCursorMismatch));
  Cursor other_epoch = mine[2].cursor;
  other_epoch.epoch += 1;
  request.until = other_epoch;
  EXPECT_THAT(replayer().Replay(request), HasErrorKind(ErrorKind::kCursorMismatch));
}

TEST_P(CursorConformanceTest, MalformedTokensAreInvalidCursor) {
  // A fixed cursor rather than a receipt's: the edit below must be caught by
  // the 16-bit check, which holds for this token but not for every one.
  const std::string token = Cursor::For("s", 1, 2).Encode();
  std::string edited = token;
  edited[10] = edited[10] == 'A' ? 'B' : 'A';
  const std::vector<std::string> malformed = {"",       "garbage",           "EARLIEST",
                                              "Latest", token.substr(0, 35), token + "A",
                                              edited,   std::string(36, '*')};
  for (const std::string& text : malformed) {
    SCOPED_TRACE(text);
    EXPECT_THAT(Position::Parse(text), HasErrorKind(ErrorKind::kInvalidCursor));
  }
}

}  // namespace
}  // namespace keel::conformance
