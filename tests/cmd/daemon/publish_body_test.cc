// ParsePublishBody: every field of a publish lands in its event, and each
// bad body is refused with the message a client reads, naming the field and,
// in a batch, the event.
#include "keel/cmd/keel/server/publish_body.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "keel/tests/testing/status_matchers.h"

namespace keel::server {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;
using ::keel::testing::StatusIs;

TEST(PublishBodyTest, EveryFieldLandsInTheEvent) {
  ASSERT_OK_AND_ASSIGN(
      const PublishBody body,
      ParsePublishBody(R"({"type":"t","tenant":"acme","id":"e-1","idempotencyKey":"k",
                           "attributes":{"a":"1","b":"2"},"data":{"n": 1.50, "s":"x y"},
                           "partitionKey":"p","expectedLastSequence":7})",
                       "", ""));
  ASSERT_EQ(body.events.size(), 1u);
  const Event& event = body.events[0];
  EXPECT_EQ(event.type, "t");
  EXPECT_EQ(event.tenant, "acme");
  EXPECT_EQ(event.id, "e-1");
  EXPECT_EQ(event.idempotency_key, "k");
  EXPECT_THAT(event.attributes, ElementsAre(Pair("a", "1"), Pair("b", "2")));
  EXPECT_EQ(event.payload, R"({"n":1.50,"s":"x y"})") << "as written, compacted";
  EXPECT_EQ(event.content_type, "application/json");
  EXPECT_THAT(body.partition_keys, ElementsAre("p"));
  EXPECT_EQ(body.expected_last_sequence, 7u);
  EXPECT_FALSE(body.was_array);
}

TEST(PublishBodyTest, NullFieldsAreAbsentAndBase64DataKeepsItsType) {
  ASSERT_OK_AND_ASSIGN(
      const PublishBody body,
      ParsePublishBody(R"([{"type":null,"tenant":null,"attributes":null,"data":null},
                           {"type":"b","dataBase64":"AQL/","contentType":"image/png"},
                           {"type":"c","dataBase64":"AQL/","contentType":null}])",
                       "", ""));
  ASSERT_EQ(body.events.size(), 3u);
  EXPECT_EQ(body.events[0].type, "");
  EXPECT_EQ(body.events[0].payload, "null");
  EXPECT_EQ(body.events[0].content_type, "application/json");
  EXPECT_EQ(body.events[1].payload, std::string("\x01\x02\xff", 3));
  EXPECT_EQ(body.events[1].content_type, "image/png");
  EXPECT_EQ(body.events[2].content_type, "application/octet-stream");
  EXPECT_THAT(body.partition_keys, ElementsAre("", "", ""));
  EXPECT_TRUE(body.was_array);
}

using Parser = absl::StatusOr<PublishBody> (*)(absl::string_view body,
                                               absl::string_view header_idempotency_key,
                                               absl::string_view header_expected);

// The header rules, for a parser: headers apply where the body says
// nothing, the body's own key wins, and an expected sequence stated twice
// must agree.
void ExpectHeadersApplyAndAgreeWithTheBody(Parser parse) {
  ASSERT_OK_AND_ASSIGN(PublishBody body, parse(R"({"type":"t"})", "hk", "4"));
  EXPECT_EQ(body.events[0].idempotency_key, "hk");
  EXPECT_EQ(body.expected_last_sequence, 4u);
  ASSERT_OK_AND_ASSIGN(body, parse(R"({"type":"t","idempotencyKey":"bk"})", "hk", ""));
  EXPECT_EQ(body.events[0].idempotency_key, "bk") << "the body's own key wins";
  EXPECT_THAT(parse(R"({"type":"t","expectedLastSequence":3})", "", "4"),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(PublishBodyTest, HeadersApplyWhereTheyMayAndAgreeWithTheBody) {
  ExpectHeadersApplyAndAgreeWithTheBody(&ParsePublishBody);
}

// The same rules in the general parser, which ParsePublishBody's plain-event
// path leaves the bodies it declines to.
TEST(PublishBodyTest, HeadersApplyAlikeInTheGeneralParser) {
  ExpectHeadersApplyAndAgreeWithTheBody(&ParsePublishBodyGeneral);
}

// A body the plain-event path declines (dataBase64) reaches the general
// parser through ParsePublishBody with its headers.
TEST(PublishBodyTest, HeadersFollowABodyThePlainPathDeclines) {
  ASSERT_OK_AND_ASSIGN(PublishBody body,
                       ParsePublishBody(R"({"type":"t","dataBase64":"AQI="})", "hk", "4"));
  ASSERT_EQ(body.events.size(), 1u);
  EXPECT_EQ(body.events[0].payload, std::string("\x01\x02"));
  EXPECT_EQ(body.events[0].idempotency_key, "hk");
  EXPECT_EQ(body.expected_last_sequence, 4u);
}

TEST(PublishBodyTest, BadBodiesAreRefusedWithTheirReason) {
  const struct {
    const char* body;
    const char* header_key;
    const char* header_expected;
    const char* message;
  } kCases[] = {
      {"{", "", "", "request body is not JSON: "},
      {"[]", "", "", "a publish needs at least one event"},
      {"7", "", "", "an event must be an object"},
      {R"([{"type":"t"},3])", "", "", "event 1: an event must be an object"},
      {R"({"type":"t","sequence":9})", "", "", "unknown field 'sequence'"},
      // The unknown field is reported before any field of the wrong kind.
      {R"({"type":1,"zzz":1})", "", "", "unknown field 'zzz'"},
      {R"({"type":1})", "", "", "type must be a string"},
      {R"({"tenant":[]})", "", "", "tenant must be a string"},
      {R"({"id":{}})", "", "", "id must be a string"},
      {R"({"idempotencyKey":2})", "", "", "idempotencyKey must be a string"},
      {R"({"partitionKey":true})", "", "", "partitionKey must be a string"},
      {R"([{"type":"t"},{"type":2}])", "", "", "event 1: type must be a string"},
      // Fields are checked in a fixed order, whatever their order in the body.
      {R"({"tenant":1,"type":2})", "", "", "type must be a string"},
      {R"({"attributes":[]})", "", "", "attributes must be an object of strings"},
      {R"({"attributes":{"k":1}})", "", "", "attribute 'k' must be a string"},
      {R"({"data":1,"dataBase64":"AQ=="})", "", "", "give either data or dataBase64, not both"},
      {R"({"data":null,"dataBase64":null})", "", "", "give either data or dataBase64, not both"},
      {R"({"dataBase64":null})", "", "", "dataBase64 must be a base64 string"},
      {R"({"dataBase64":"***"})", "", "", "dataBase64 must be a base64 string"},
      {R"({"dataBase64":"AQ==","contentType":5})", "", "", "contentType must be a string"},
      {R"({"expectedLastSequence":-1})", "", "",
       "expectedLastSequence must be a non-negative integer"},
      {R"({"expectedLastSequence":null})", "", "",
       "expectedLastSequence must be a non-negative integer"},
      {R"([{"expectedLastSequence":1}])", "", "",
       "event 0: expectedLastSequence applies to a whole publish"},
      {R"([{"type":"t"}])", "k", "", "the Idempotency-Key header applies to single events"},
      {R"({"type":"t"})", "", "x", "Keel-Expected-Last-Sequence must be a non-negative integer"},
      {R"({"type":"t","expectedLastSequence":1})", "", "2",
       "Keel-Expected-Last-Sequence and expectedLastSequence disagree"},
  };
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.body);
    const absl::StatusOr<PublishBody> body =
        ParsePublishBody(c.body, c.header_key, c.header_expected);
    ASSERT_EQ(body.status().code(), absl::StatusCode::kInvalidArgument) << body.status();
    EXPECT_THAT(std::string(body.status().message()), ::testing::StartsWith(c.message));
  }
}

}  // namespace
}  // namespace keel::server
