// ParsePlainEvent, the fast path of ParsePublishBody: what it takes, it takes
// as the general parser does, and all else (including every invalid body) it
// leaves to the general parser. Checked on chosen bodies and on many
// generated and mutated ones.
#include "keel/cmd/keel/server/plain_event.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "keel/cmd/keel/server/publish_body.h"

namespace keel::server {
namespace {

// Whether the fast path took `text`; when it did, that the general parser
// accepts it as the same body.
bool TakenAsTheGeneralParserDoes(const std::string& text) {
  const std::optional<PublishBody> plain = ParsePlainEvent(text);
  if (!plain) return false;
  const absl::StatusOr<PublishBody> general = ParsePublishBodyGeneral(text, "", "");
  EXPECT_TRUE(general.ok()) << text << ": " << general.status();
  if (!general.ok()) return true;
  EXPECT_EQ(plain->events, general->events) << text;
  EXPECT_EQ(plain->partition_keys, general->partition_keys) << text;
  EXPECT_EQ(plain->expected_last_sequence, general->expected_last_sequence) << text;
  EXPECT_EQ(plain->was_array, general->was_array) << text;
  return true;
}

TEST(PlainEventTest, TakesTheCommonBodies) {
  for (const char* text : {
           R"({"type":"order.created","data":{"id":7,"total":1.50,"items":["a","b"]}})",
           R"({"type":"t","data":"plain text"})",
           R"( { "type" : "t" , "tenant":"acme", "id":"e-1", "idempotencyKey":"k",
                 "partitionKey":"p", "attributes":{"a":"1","b":"2"},
                 "data" : [ 1 , -0.5 , true , false , null , {} , [] , "x\"y\\u00e9" ] } )",
           R"({"type":"t","data":null})",
           R"({"type":"t","idempotencyKey":""})",
           R"({"type":"t","attributes":{}})",
           R"({})",
       }) {
    EXPECT_TRUE(TakenAsTheGeneralParserDoes(text)) << text;
  }
}

TEST(PlainEventTest, LeavesTheRestToTheGeneralParser) {
  for (const char* text : {
           R"([{"type":"t"}])",                         // A batch.
           R"({"type":"t\n"})",                         // An escape in a field.
           R"({"type":"caf\u00e9"})",                   // An escape in a field.
           "{\"type\":\"caf\xc3\xa9\"}",                // Non-ASCII.
           "{\"type\":\"t\",\"data\":\"\xc3\xa9\"}",    // Non-ASCII data.
           R"({"type":null})",                          // A null field.
           R"({"type":"a","type":"b"})",                // A repeated name.
           R"({"type":"t","sequence":1})",              // An unknown field.
           R"({"type":"t","expectedLastSequence":1})",  // A field it does not take.
           R"({"type":"t","dataBase64":"AQ=="})",
           R"({"type":"t","attributes":{"a":"1","a":"2"}})",
           R"({"type":"t","attributes":{"a":1}})",
           R"({"type":"t","data":1e3})",                                    // An exponent.
           R"({"type":"t","data":1234567890123456})",                       // A long number.
           R"({"type":"t","data":"\ud800"})",                               // A surrogate escape.
           R"({"type":"t","data":[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]})",  // Deep.
           R"({"type":"t","data":01})",  // Invalid JSON from here on.
           R"({"type":"t","data":[1,]})",
           R"({"type":"t",})",
           R"({"type":"t"} x)",
           R"({"type":"t","data":tru})",
           R"({"type":"t","data":"x\q"})",
           "{\"type\":\"t\",\"data\":\"a\tb\"}",
           R"({"type":"t")",
           R"()",
       }) {
    EXPECT_FALSE(ParsePlainEvent(text).has_value()) << text;
  }
}

// Bodies built from members chosen, spaced and ordered at random, some then
// cut or mutated a byte at a time: whenever the fast path takes one, the
// general parser takes it the same way.
TEST(PlainEventTest, AgreesWithTheGeneralParserOnGeneratedBodies) {
  const std::vector<std::string> kStrings = {R"("")",        R"("t")",    R"("order.created")",
                                             R"("a b")",     R"("x\"y")", R"("\u0041")",
                                             "\"\xc3\xa9\"", R"(null)",   R"(1)",
                                             R"("\n")",      R"("/")",    R"x("~!@#$%^&*()")x"};
  const std::vector<std::string> kData = {R"(null)",
                                          R"(true)",
                                          R"(false)",
                                          R"(0)",
                                          R"(-0)",
                                          R"(1.50)",
                                          R"(-12.0)",
                                          R"(123456789012345)",
                                          R"(1e5)",
                                          R"("s")",
                                          R"({})",
                                          R"([])",
                                          R"({"a":[1,{"b":null}],"c":"d"})",
                                          R"([1, 2 ,3])",
                                          R"({"a":1,"a":2})",
                                          R"("\u00e9\\")",
                                          R"(00)",
                                          R"(1.)",
                                          R"(.5)",
                                          R"(-)"};
  const std::vector<std::string> kNames = {"type",         "tenant", "id",         "idempotencyKey",
                                           "partitionKey", "data",   "attributes", "other"};
  const std::vector<std::string> kSpaces = {"", " ", "\n", "\t ", "\r\n"};
  std::mt19937 random(7);
  auto pick = [&](const std::vector<std::string>& from) {
    return from[std::uniform_int_distribution<size_t>(0, from.size() - 1)(random)];
  };
  int taken = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<std::string> members;
    const int count = std::uniform_int_distribution<int>(0, 5)(random);
    for (int m = 0; m < count; ++m) {
      const std::string name = pick(kNames);
      std::string value = name == "data" ? pick(kData) : pick(kStrings);
      if (name == "attributes") value = absl::StrCat("{\"k\":", pick(kStrings), "}");
      members.push_back(absl::StrCat(pick(kSpaces), "\"", name, "\"", pick(kSpaces), ":",
                                     pick(kSpaces), value, pick(kSpaces)));
    }
    std::string text = absl::StrCat(pick(kSpaces), "{", absl::StrJoin(members, ","), "}");
    switch (i % 4) {
      case 1:  // Cut short.
        text.resize(std::uniform_int_distribution<size_t>(0, text.size())(random));
        break;
      case 2: {  // One byte changed.
        const size_t at = std::uniform_int_distribution<size_t>(0, text.size() - 1)(random);
        text[at] = "{}[],:\"\\ a1-.e"[std::uniform_int_distribution<int>(0, 13)(random)];
        break;
      }
      default:
        break;
    }
    if (TakenAsTheGeneralParserDoes(text)) ++taken;
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(taken, 1000) << "the generator rarely makes a body the fast path takes";
}

}  // namespace
}  // namespace keel::server
