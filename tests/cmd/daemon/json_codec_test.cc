// The hand-written JSON pieces of events: times and strings are byte for
// byte what absl::FormatTime and Boost.JSON write, over the whole range the
// fast paths cover and at their edges.
#include "keel/cmd/keel/server/json_codec.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <utility>

namespace keel::server {
namespace {

std::string Reference(absl::Time time) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E9SZ", time, absl::UTCTimeZone());
}

std::string Serialized(absl::string_view text) {
  return boost::json::serialize(boost::json::string_view(text.data(), text.size()));
}

TEST(FormatRfc3339Test, MatchesAbslAcrossTheYears) {
  std::mt19937_64 random(42);
  std::uniform_int_distribution<int64_t> seconds(0, 253402300799);  // 1970 .. 9999.
  std::uniform_int_distribution<int64_t> nanos(0, 999'999'999);
  for (int i = 0; i < 100'000; ++i) {
    const absl::Time time = absl::FromUnixSeconds(seconds(random)) + absl::Nanoseconds(nanos(random));
    ASSERT_EQ(FormatRfc3339(time), Reference(time)) << absl::ToUnixNanos(time);
  }
}

TEST(FormatRfc3339Test, MatchesAbslOnCalendarEdges) {
  const absl::TimeZone utc = absl::UTCTimeZone();
  for (const absl::CivilSecond civil :
       {absl::CivilSecond(1970, 1, 1), absl::CivilSecond(1972, 2, 29, 23, 59, 59),
        absl::CivilSecond(2000, 2, 29), absl::CivilSecond(2000, 3, 1),
        absl::CivilSecond(2100, 2, 28, 12), absl::CivilSecond(2100, 3, 1),
        absl::CivilSecond(2026, 12, 31, 23, 59, 59), absl::CivilSecond(9999, 12, 31, 23, 59, 59),
        absl::CivilSecond(1969, 12, 31, 23, 59, 59), absl::CivilSecond(1900, 3, 1),
        absl::CivilSecond(10000, 1, 1)}) {
    for (const absl::Duration offset :
         {absl::ZeroDuration(), absl::Nanoseconds(1), absl::Nanoseconds(999'999'999),
          absl::Nanoseconds(1) / 4}) {
      const absl::Time time = absl::FromCivil(civil, utc) + offset;
      EXPECT_EQ(FormatRfc3339(time), Reference(time)) << civil;
    }
  }
  EXPECT_EQ(FormatRfc3339(absl::InfiniteFuture()), Reference(absl::InfiniteFuture()));
  EXPECT_EQ(FormatRfc3339(absl::InfinitePast()), Reference(absl::InfinitePast()));
}

TEST(FormatRfc3339Test, AppendsAfterWhatIsThere) {
  std::string out = "at ";
  AppendRfc3339(absl::FromUnixSeconds(1) + absl::Milliseconds(5), out);
  EXPECT_EQ(out, "at 1970-01-01T00:00:01.005000000Z");
}

TEST(JsonStringTest, MatchesBoostJsonForEveryAsciiByteAndForUtf8) {
  for (int c = 0; c < 128; ++c) {
    const std::string text = "a" + std::string(1, static_cast<char>(c)) + "z";
    EXPECT_EQ(JsonString(text), Serialized(text)) << c;
  }
  for (const char* text : {"", "plain", "quote\"back\\slash", "tab\tnew\nline", "caf\xc3\xa9",
                           "\xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf"}) {
    EXPECT_EQ(JsonString(text), Serialized(text)) << text;
  }
}

// Found by fuzzing (http_request_fuzzer): a Last-Event-ID of bytes that are
// not UTF-8 was quoted as it came into the 400's message, and the answer was
// not JSON a client could parse. JSON text is UTF-8: such bytes become
// U+FFFD, one per byte that does not begin a well-formed sequence.
TEST(JsonStringTest, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  const std::string replacement = "\xef\xbf\xbd";
  for (int c = 128; c < 256; ++c) {
    const std::string text = "a" + std::string(1, static_cast<char>(c)) + "z";
    EXPECT_EQ(JsonString(text), "\"a" + replacement + "z\"") << c;
  }
  const std::pair<std::string, std::string> cases[] = {
      {"\xc3", replacement},                                      // Cut short.
      {"\xc0\xaf", replacement + replacement},                    // Overlong '/'.
      {"\xe0\x80\xaf", replacement + replacement + replacement},  // Overlong, 3 bytes.
      {"\xed\xa0\x80", replacement + replacement + replacement},  // A surrogate.
      {"\xf4\x90\x80\x80", replacement + replacement + replacement + replacement},  // > U+10FFFF.
      {"ok\xffstill \xc3\xa9", "ok" + replacement + "still \xc3\xa9"},
  };
  for (const auto& [text, expected] : cases) {
    EXPECT_EQ(boost::json::parse(JsonString(text)).as_string(), expected);
  }
}

TEST(AppendEventJsonTest, AttributesThatAreNotUtf8StillMakeJson) {
  Event event;
  event.stream = "s";
  event.sequence = 1;
  event.type = "t";
  event.time = absl::FromUnixSeconds(1);
  event.content_type = "application/octet-stream";
  event.attributes = {{"ok", "fine"}, {"k\xff", "v\xfe"}};
  std::string out;
  AppendEventJson(event, "cursor", out);
  const boost::json::value parsed = boost::json::parse(out);
  const boost::json::object& attributes = parsed.at("attributes").as_object();
  EXPECT_EQ(attributes.at("ok").as_string(), "fine");
  EXPECT_EQ(attributes.at("k\xef\xbf\xbd").as_string(), "v\xef\xbf\xbd");
}

}  // namespace
}  // namespace keel::server
