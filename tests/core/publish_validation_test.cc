// Publish validation and preparation shared by every driver: names, sizes,
// fields, preset sequences, id generation and the redactor hook.
#include "keel/core/publish_validation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "keel/core/clock.h"
#include "keel/core/errors.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel {
namespace {

using ::keel::testing::HasErrorKind;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

constexpr char kUuidV7[] = "[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}";

Event MakeEvent(std::string type = "order.created", std::string payload = "{}") {
  Event event;
  event.type = std::move(type);
  event.payload = std::move(payload);
  return event;
}

class PrepareTest : public ::testing::Test {
 protected:
  absl::Status Prepare(std::vector<Event>& events, const Redactor* redactor = nullptr,
                       absl::string_view stream = "orders") {
    return PrepareForPublish(stream, events, clock_, redactor, limits_);
  }
  absl::Status PrepareOne(Event event) {
    std::vector<Event> events = {std::move(event)};
    return Prepare(events);
  }

  ManualClock clock_;
  PublishLimits limits_;
};

TEST(ValidateStreamNameTest, AcceptsTheWholeAlphabet) {
  EXPECT_OK(ValidateStreamName("ABCDEFGHIJKLMNOPQRSTUVWXYZ"));
  EXPECT_OK(ValidateStreamName("abcdefghijklmnopqrstuvwxyz"));
  EXPECT_OK(ValidateStreamName("0123456789"));
  EXPECT_OK(ValidateStreamName("a.b_c:d-e"));
  EXPECT_OK(ValidateStreamName("-"));
}

TEST(ValidateStreamNameTest, RejectsEverythingElse) {
  for (char c = 1; c < 127; ++c) {
    const bool allowed = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                         (c >= '0' && c <= '9') || c == '.' || c == '_' || c == ':' || c == '-';
    if (allowed) continue;
    EXPECT_THAT(ValidateStreamName(absl::StrCat("a", std::string(1, c), "b")),
                HasErrorKind(ErrorKind::kInvalidArgument))
        << static_cast<int>(c);
  }
  EXPECT_THAT(ValidateStreamName("caf\xc3\xa9"), HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(ValidateStreamName(std::string("a\0b", 3)),
              HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(ValidateStreamName(""), HasErrorKind(ErrorKind::kInvalidArgument));
}

TEST(ValidateStreamNameTest, LengthLimitIs255) {
  EXPECT_OK(ValidateStreamName(std::string(255, 'x')));
  EXPECT_THAT(ValidateStreamName(std::string(256, 'x')), HasErrorKind(ErrorKind::kInvalidArgument));
}

TEST(NewEventIdTest, IsUuidV7Shaped) {
  for (int i = 0; i < 100; ++i) {
    EXPECT_THAT(NewEventId(absl::Now()), MatchesRegex(kUuidV7));
  }
}

TEST(NewEventIdTest, LeadingBitsAreTheUnixMillis) {
  const absl::Time now = absl::FromUnixMillis(1'700'000'123'456);
  const std::string id = NewEventId(now);
  uint64_t millis = 0;
  ASSERT_TRUE(absl::SimpleHexAtoi(absl::StrReplaceAll(id.substr(0, 13), {{"-", ""}}), &millis));
  EXPECT_EQ(millis, 1'700'000'123'456u);
}

TEST(NewEventIdTest, IsUniqueWithinOneMillisecond) {
  const absl::Time now = absl::Now();
  std::set<std::string> ids;
  for (int i = 0; i < 20'000; ++i) ids.insert(NewEventId(now));
  EXPECT_EQ(ids.size(), 20'000u);
}

TEST(NewEventIdTest, SortsByTimeAcrossMilliseconds) {
  const absl::Time t = absl::FromUnixMillis(1'700'000'000'000);
  EXPECT_LT(NewEventId(t), NewEventId(t + absl::Milliseconds(1)));
  EXPECT_LT(NewEventId(t), NewEventId(t + absl::Hours(24 * 365)));
}

TEST_F(PrepareTest, FillsStreamTimeAndId) {
  std::vector<Event> events = {MakeEvent(), MakeEvent()};
  events[1].id = "caller-chosen";
  ASSERT_OK(Prepare(events));
  for (const Event& event : events) {
    EXPECT_EQ(event.stream, "orders");
    EXPECT_EQ(event.time, clock_.Now());
    EXPECT_EQ(event.sequence, 0u) << "sequences are the driver's job";
  }
  EXPECT_THAT(events[0].id, MatchesRegex(kUuidV7));
  EXPECT_EQ(events[1].id, "caller-chosen");
}

TEST_F(PrepareTest, PresetSequenceIsRejectedNamingTheEvent) {
  std::vector<Event> events = {MakeEvent(), MakeEvent()};
  events[1].sequence = 5;
  absl::Status status = Prepare(events);
  EXPECT_THAT(status, HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(status.message(), HasSubstr("event 1"));
  EXPECT_THAT(status.message(), HasSubstr("sequence"));
}

TEST_F(PrepareTest, InvalidFieldsAreNamedWithTheirIndex) {
  std::vector<Event> events = {MakeEvent(), MakeEvent(), MakeEvent("")};
  absl::Status status = Prepare(events);
  EXPECT_THAT(status, HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(status.message(), HasSubstr("event 2"));
  EXPECT_THAT(status.message(), HasSubstr("type"));
}

TEST_F(PrepareTest, RejectsBadFields) {
  Event bad_tenant = MakeEvent();
  bad_tenant.tenant = "acme corp";  // Tenants use the name alphabet.
  Event control_in_type = MakeEvent("order\ncreated");
  Event empty_attribute_key = MakeEvent();
  empty_attribute_key.attributes[""] = "v";
  Event empty_idempotency_key = MakeEvent();
  empty_idempotency_key.idempotency_key = "";
  Event long_id = MakeEvent();
  long_id.id = std::string(129, 'i');
  Event too_many_attributes = MakeEvent();
  for (int i = 0; i < 65; ++i) too_many_attributes.attributes[absl::StrCat("k", i)] = "v";
  for (Event* event : {&bad_tenant, &control_in_type, &empty_attribute_key, &empty_idempotency_key,
                       &long_id, &too_many_attributes}) {
    EXPECT_THAT(PrepareOne(*event), HasErrorKind(ErrorKind::kInvalidArgument));
  }
}

TEST_F(PrepareTest, AcceptsOptionalFieldsAtTheirLimits) {
  Event event = MakeEvent(std::string(255, 't'));
  event.tenant = "acme";
  event.id = std::string(128, 'i');
  for (int i = 0; i < 64; ++i) event.attributes[absl::StrCat("k", i)] = "";
  EXPECT_OK(PrepareOne(event));
}

TEST_F(PrepareTest, EventFromAnotherStreamIsRejected) {
  std::vector<Event> events = {MakeEvent(), MakeEvent()};
  events[0].stream = "orders";  // Naming the batch's own stream is fine.
  events[1].stream = "users";
  EXPECT_THAT(Prepare(events), HasErrorKind(ErrorKind::kInvalidArgument));
}

TEST_F(PrepareTest, EmptyBatchAndBadStreamAreRejected) {
  std::vector<Event> none;
  EXPECT_THAT(Prepare(none), HasErrorKind(ErrorKind::kInvalidArgument));
  std::vector<Event> events = {MakeEvent()};
  EXPECT_THAT(Prepare(events, nullptr, "bad stream"), HasErrorKind(ErrorKind::kInvalidArgument));
}

TEST_F(PrepareTest, EventSizeLimit) {
  limits_.max_event_bytes = 1000;
  Event probe = MakeEvent("t", "");
  probe.stream = "orders";
  probe.id = NewEventId(absl::Now());  // The bus adds one before storing.
  const size_t overhead = probe.ApproximateSize();  // Everything but the payload.
  EXPECT_OK(PrepareOne(MakeEvent("t", std::string(1000 - overhead, 'x'))));
  absl::Status status = PrepareOne(MakeEvent("t", std::string(1001 - overhead, 'x')));
  EXPECT_THAT(status, HasErrorKind(ErrorKind::kPayloadTooLarge));
  EXPECT_THAT(status.message(), HasSubstr("event 0"));
}

TEST_F(PrepareTest, SizeLimitDoesNotDependOnSpellingOutTheStream) {
  // The same event is either accepted or rejected whether or not the
  // publisher filled the optional `stream` field.
  limits_.max_event_bytes = 1000;
  Event probe = MakeEvent("t", "");
  probe.stream = "orders";
  probe.id = NewEventId(absl::Now());
  Event at_limit = MakeEvent("t", std::string(1000 - probe.ApproximateSize(), 'x'));
  Event named = at_limit;
  named.stream = "orders";
  EXPECT_OK(PrepareOne(at_limit));
  EXPECT_OK(PrepareOne(named));
}

TEST_F(PrepareTest, BatchLimits) {
  limits_.max_batch_events = 3;
  std::vector<Event> four(4, MakeEvent());
  EXPECT_THAT(Prepare(four), HasErrorKind(ErrorKind::kPayloadTooLarge));
  std::vector<Event> three(3, MakeEvent());
  EXPECT_OK(Prepare(three));

  limits_ = PublishLimits{};
  limits_.max_batch_bytes = 1000;
  std::vector<Event> heavy(3, MakeEvent("t", std::string(400, 'x')));
  EXPECT_THAT(Prepare(heavy), HasErrorKind(ErrorKind::kPayloadTooLarge));
}

class MaskingRedactor : public Redactor {
 public:
  void Redact(Event& event) const override {
    event.payload = "***";
    event.attributes["redacted"] = "true";
  }
};

class StreamChangingRedactor : public Redactor {
 public:
  void Redact(Event& event) const override { event.stream = "elsewhere"; }
};

class SequenceSettingRedactor : public Redactor {
 public:
  void Redact(Event& event) const override { event.sequence = 1; }
};

TEST_F(PrepareTest, RedactorIsApplied) {
  std::vector<Event> events = {MakeEvent("t", "secret"), MakeEvent("t", "secret")};
  MaskingRedactor redactor;
  ASSERT_OK(Prepare(events, &redactor));
  for (const Event& event : events) {
    EXPECT_EQ(event.payload, "***");
    EXPECT_EQ(event.attributes.at("redacted"), "true");
    EXPECT_EQ(event.stream, "orders");
  }
}

TEST_F(PrepareTest, RedactorChangingStreamOrSequenceIsRefused) {
  StreamChangingRedactor stream_changer;
  SequenceSettingRedactor sequence_setter;
  for (const Redactor* redactor : std::vector<const Redactor*>{&stream_changer, &sequence_setter}) {
    std::vector<Event> events = {MakeEvent()};
    EXPECT_FALSE(Prepare(events, redactor).ok());
  }
}

TEST_F(PrepareTest, RedactorDoesNotRunOnInvalidInput) {
  std::vector<Event> events = {MakeEvent("t", "secret"), MakeEvent("")};
  MaskingRedactor redactor;
  EXPECT_THAT(Prepare(events, &redactor), HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_EQ(events[0].payload, "secret") << "a rejected publish leaves the events untouched";
}

}  // namespace
}  // namespace keel
