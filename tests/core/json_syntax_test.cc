// What a collection accepts as a document: one JSON text, valid UTF-8,
// nested no deeper than kMaxJsonDepth.
#include "keel/core/json_syntax.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace keel {
namespace {

using ::testing::Not;
using ::testing::IsEmpty;

TEST(JsonSyntaxTest, AcceptsEveryKindOfJsonValue) {
  for (const char* text : {R"({"a":[1,-2.5e3,true,false,null,"x\u00e9\n"],"b":{}})", "[]", "0",
                           "\"caf\xc3\xa9\"", "  {\"a\":1}\n", "-0.0", "1e400"}) {
    std::string error;
    EXPECT_TRUE(IsJsonText(text, &error)) << text << ": " << error;
  }
}

TEST(JsonSyntaxTest, RefusesWhatIsNotOneJsonTextAndSaysWhy) {
  for (const char* text : {"", "{", R"({"a":})", "{\"a\":1}{}", "[1,]", "{'a':1}", "nul", "01",
                           "\"\xff\"", "{\"a\":1} x", "// c\n1", "NaN"}) {
    std::string error;
    EXPECT_FALSE(IsJsonText(text, &error)) << text;
    EXPECT_THAT(error, Not(IsEmpty())) << text;
  }
}

TEST(JsonSyntaxTest, NestingIsBounded) {
  auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  EXPECT_TRUE(IsJsonText(nested(kMaxJsonDepth)));
  EXPECT_FALSE(IsJsonText(nested(kMaxJsonDepth + 1)));
}

}  // namespace
}  // namespace keel
