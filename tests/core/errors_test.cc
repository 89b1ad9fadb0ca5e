// Typed errors: every kind's name and canonical absl code, detection from a
// status, and the structured details that survive copies.
#include "keel/core/errors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <tuple>
#include <vector>

#include "absl/strings/cord.h"

namespace keel {
namespace {

using ::testing::HasSubstr;

struct KindCase {
  ErrorKind kind;
  const char* name;
  absl::StatusCode code;
};

// The table rfcs/0004-http-api.md and clients rely on; changing a row is a
// breaking change.
const std::vector<KindCase> kKinds = {
    {ErrorKind::kInvalidArgument, "invalid_argument", absl::StatusCode::kInvalidArgument},
    {ErrorKind::kInvalidCursor, "invalid_cursor", absl::StatusCode::kInvalidArgument},
    {ErrorKind::kRetentionGap, "retention_gap", absl::StatusCode::kOutOfRange},
    {ErrorKind::kCursorMismatch, "cursor_mismatch", absl::StatusCode::kFailedPrecondition},
    {ErrorKind::kPayloadTooLarge, "payload_too_large", absl::StatusCode::kResourceExhausted},
    {ErrorKind::kConflict, "conflict", absl::StatusCode::kAborted},
    {ErrorKind::kResourceDrift, "resource_drift", absl::StatusCode::kFailedPrecondition},
    {ErrorKind::kUnavailable, "unavailable", absl::StatusCode::kUnavailable},
    {ErrorKind::kClosed, "closed", absl::StatusCode::kCancelled},
    {ErrorKind::kNotFound, "not_found", absl::StatusCode::kNotFound},
    {ErrorKind::kSlowConsumer, "slow_consumer", absl::StatusCode::kResourceExhausted},
};

TEST(ErrorsTest, EveryKindHasItsNameAndCode) {
  for (const KindCase& c : kKinds) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(ErrorKindName(c.kind), c.name);
    absl::Status status = MakeError(c.kind, "something failed");
    EXPECT_EQ(status.code(), c.code);
    EXPECT_EQ(status.message(), "something failed");
    EXPECT_EQ(GetErrorKind(status), c.kind);
  }
}

TEST(ErrorsTest, KindsSharingACodeStayDistinct) {
  // invalid_argument / invalid_cursor and payload_too_large / slow_consumer
  // share absl codes; the kind is what tells them apart.
  EXPECT_EQ(GetErrorKind(MakeError(ErrorKind::kInvalidCursor, "x")), ErrorKind::kInvalidCursor);
  EXPECT_EQ(GetErrorKind(MakeError(ErrorKind::kSlowConsumer, "x")), ErrorKind::kSlowConsumer);
  EXPECT_EQ(GetErrorKind(MakeError(ErrorKind::kResourceDrift, "x")), ErrorKind::kResourceDrift);
}

TEST(ErrorsTest, NoneAndOther) {
  EXPECT_EQ(ErrorKindName(ErrorKind::kNone), "ok");
  EXPECT_EQ(ErrorKindName(ErrorKind::kOther), "other");
  EXPECT_EQ(GetErrorKind(absl::OkStatus()), ErrorKind::kNone);
  EXPECT_EQ(GetErrorKind(absl::InternalError("disk on fire")), ErrorKind::kOther);
  EXPECT_EQ(GetErrorKind(absl::InvalidArgumentError("plain")), ErrorKind::kOther)
      << "a plain absl error has no Keel kind even when its code matches one";
  absl::Status other = MakeError(ErrorKind::kOther, "unknown");
  EXPECT_FALSE(other.ok());
  EXPECT_EQ(GetErrorKind(other), ErrorKind::kOther);
}

TEST(ErrorsTest, ForeignPayloadIsOther) {
  absl::Status status = absl::NotFoundError("x");
  status.SetPayload("type.keel.dev/keel.error", absl::Cord("no_such_kind"));
  EXPECT_EQ(GetErrorKind(status), ErrorKind::kOther);
}

TEST(ErrorsTest, HelpersProduceTheirKinds) {
  const std::vector<std::pair<absl::Status, ErrorKind>> cases = {
      {InvalidArgument("m"), ErrorKind::kInvalidArgument},
      {InvalidCursor("m"), ErrorKind::kInvalidCursor},
      {CursorMismatch("m"), ErrorKind::kCursorMismatch},
      {PayloadTooLarge("m"), ErrorKind::kPayloadTooLarge},
      {ResourceDrift("m"), ErrorKind::kResourceDrift},
      {Unavailable("m"), ErrorKind::kUnavailable},
      {Closed("m"), ErrorKind::kClosed},
      {NotFound("m"), ErrorKind::kNotFound},
  };
  for (const auto& [status, kind] : cases) {
    EXPECT_EQ(GetErrorKind(status), kind) << status;
    EXPECT_EQ(status.message(), "m");
  }
}

TEST(ErrorsTest, RetentionGapDetailsRoundTrip) {
  absl::Status status = RetentionGapError("orders", RetentionGap{3, 16});
  EXPECT_EQ(GetErrorKind(status), ErrorKind::kRetentionGap);
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(status.message(), HasSubstr("orders"));
  absl::Status copy = status;  // Details travel with the status.
  std::optional<RetentionGap> gap = GetRetentionGap(copy);
  ASSERT_TRUE(gap.has_value());
  EXPECT_EQ(gap->requested_after, 3u);
  EXPECT_EQ(gap->oldest, 16u);
  EXPECT_EQ(gap->missed(), 12u);  // Sequences 4..15.
}

TEST(ErrorsTest, RetentionGapSurvivesLargeSequences) {
  std::optional<RetentionGap> gap =
      GetRetentionGap(RetentionGapError("s", RetentionGap{UINT64_MAX - 10, UINT64_MAX}));
  ASSERT_TRUE(gap.has_value());
  EXPECT_EQ(gap->requested_after, UINT64_MAX - 10);
  EXPECT_EQ(gap->oldest, UINT64_MAX);
}

TEST(ErrorsTest, ConflictDetailsRoundTrip) {
  absl::Status status = ConflictError("version moved", ConflictInfo{7, 9});
  EXPECT_EQ(GetErrorKind(status), ErrorKind::kConflict);
  EXPECT_EQ(status.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(status.message(), "version moved");
  std::optional<ConflictInfo> info = GetConflict(status);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->expected, 7u);
  EXPECT_EQ(info->actual, 9u);
}

TEST(ErrorsTest, DetailsOfTheWrongKindAreAbsent) {
  EXPECT_FALSE(GetRetentionGap(ConflictError("m", ConflictInfo{1, 2})).has_value());
  EXPECT_FALSE(GetConflict(RetentionGapError("s", RetentionGap{1, 2})).has_value());
  EXPECT_FALSE(GetRetentionGap(MakeError(ErrorKind::kRetentionGap, "no details")).has_value());
  EXPECT_FALSE(GetConflict(MakeError(ErrorKind::kConflict, "no details")).has_value());
  EXPECT_FALSE(GetRetentionGap(absl::OkStatus()).has_value());
  EXPECT_FALSE(GetRetentionGap(absl::OutOfRangeError("plain")).has_value());
}

TEST(ErrorsTest, AnUnknownOutcomeIsUnavailableAndSaysSo) {
  const absl::Status unknown = OutcomeUnknownError("no answer");
  EXPECT_EQ(GetErrorKind(unknown), ErrorKind::kUnavailable);
  EXPECT_EQ(unknown.code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(IsOutcomeUnknown(unknown));
  // Plain unavailability means nothing was stored.
  EXPECT_FALSE(IsOutcomeUnknown(Unavailable("not stored")));
  EXPECT_FALSE(IsOutcomeUnknown(absl::UnavailableError("plain")));
  EXPECT_FALSE(IsOutcomeUnknown(absl::OkStatus()));
}

}  // namespace
}  // namespace keel
