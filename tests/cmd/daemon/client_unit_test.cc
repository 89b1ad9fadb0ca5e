// Unit tests of the client library's pure parts: the SSE parser, raw JSON
// slicing, targets, server addresses and error mapping.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "keel/cmd/keel/client/errors.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/cmd/keel/client/raw_json.h"
#include "keel/cmd/keel/client/sse_parser.h"
#include "keel/core/errors.h"

namespace keel::client {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<SseFrame> ParseAll(const std::vector<std::string>& pieces) {
  SseParser parser;
  std::vector<SseFrame> frames;
  for (const std::string& piece : pieces) {
    parser.Feed(piece);
    while (auto frame = parser.Pop()) frames.push_back(*std::move(frame));
  }
  return frames;
}

TEST(SseParserTest, ParsesFieldsOfOneEvent) {
  auto frames = ParseAll({"id: c1\nevent: order.created\ndata: {\"a\":1}\n\n"});
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].id, "c1");
  EXPECT_EQ(frames[0].event, "order.created");
  EXPECT_EQ(frames[0].data, "{\"a\":1}");
  EXPECT_TRUE(frames[0].IsEvent());
  EXPECT_EQ(frames[0].type(), "order.created");
}

TEST(SseParserTest, JoinsMultiLineDataAndStripsOnlyOneSpace) {
  auto frames = ParseAll({"data: first\ndata:second\ndata:  third\n\n"});
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].data, "first\nsecond\n third");
  EXPECT_EQ(frames[0].type(), "message");
  EXPECT_FALSE(frames[0].id.has_value());
}

TEST(SseParserTest, AcceptsCrLfAndCrLineEndsEvenSplitAcrossPieces) {
  auto frames = ParseAll({"id: a\r", "\ndata: x\r\n\r", "\nid: b\rdata: y\r\r"});
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].id, "a");
  EXPECT_EQ(frames[0].data, "x");
  EXPECT_EQ(frames[1].id, "b");
  EXPECT_EQ(frames[1].data, "y");
}

TEST(SseParserTest, ByteByByteFeedingGivesTheSameFrames) {
  const std::string stream =
      "\xEF\xBB\xBFretry: 1500\n\n: keepalive\n\nid: 7\nevent: t\ndata: {\"k\":\"v\"}\ndata: 2\n\n";
  std::vector<std::string> bytes;
  for (char c : stream) bytes.emplace_back(1, c);
  auto whole = ParseAll({stream});
  auto split = ParseAll(bytes);
  ASSERT_EQ(whole.size(), 3u);
  ASSERT_EQ(split.size(), 3u);
  for (size_t i = 0; i < whole.size(); ++i) {
    EXPECT_EQ(whole[i].id, split[i].id);
    EXPECT_EQ(whole[i].event, split[i].event);
    EXPECT_EQ(whole[i].data, split[i].data);
    EXPECT_EQ(whole[i].retry_ms, split[i].retry_ms);
    EXPECT_EQ(whole[i].comments, split[i].comments);
  }
  EXPECT_EQ(whole[0].retry_ms, 1500);  // The BOM did not hide the first field.
  EXPECT_FALSE(whole[0].IsEvent());
  EXPECT_THAT(whole[1].comments, ElementsAre("keepalive"));
  EXPECT_FALSE(whole[1].IsEvent());
  EXPECT_EQ(whole[2].data, "{\"k\":\"v\"}\n2");
}

TEST(SseParserTest, IgnoresBadRetryUnknownFieldsAndKeepsLastEventId) {
  SseParser parser;
  parser.Feed("retry: 10x\nfoo: bar\ndata\n\nid: 42\ndata: a\n\ndata: b\n\n");
  auto first = parser.Pop();
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(first->retry_ms.has_value());
  EXPECT_TRUE(first->IsEvent());  // "data" without a colon: empty data.
  EXPECT_EQ(first->data, "");
  auto second = parser.Pop();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->id, "42");
  auto third = parser.Pop();
  ASSERT_TRUE(third.has_value());
  EXPECT_FALSE(third->id.has_value());
  EXPECT_EQ(parser.last_event_id(), "42");
  EXPECT_FALSE(parser.Pop().has_value());
}

TEST(SseParserTest, DiscardsAnUnterminatedFrame) {
  SseParser parser;
  parser.Feed("id: 1\ndata: complete\n\nid: 2\ndata: incomplete\n");
  ASSERT_TRUE(parser.Pop().has_value());
  EXPECT_FALSE(parser.Pop().has_value());
}

TEST(RawJsonTest, SlicesMembersAndElementsVerbatim) {
  const std::string body =
      R"({"events":[{"a":1.0,"s":"x,]}\"y"},{"b":[1,{"c":null}]}] , "next":"n1","reachedEnd":false})";
  auto events = RawMember(body, "events");
  ASSERT_TRUE(events.has_value());
  EXPECT_THAT(RawElements(*events),
              ElementsAre(R"({"a":1.0,"s":"x,]}\"y"})", R"({"b":[1,{"c":null}]})"));
  EXPECT_EQ(RawMember(body, "next"), "\"n1\"");
  EXPECT_EQ(RawMember(body, "reachedEnd"), "false");
  EXPECT_FALSE(RawMember(body, "missing").has_value());
  EXPECT_THAT(RawElements("[]"), IsEmpty());
  EXPECT_THAT(RawElements(" [ 1 , \"2\" ] "), ElementsAre("1", "\"2\""));
}

TEST(RawJsonTest, UniqueMemberRefusesRepeatedAndEscapedNames) {
  EXPECT_EQ(RawUniqueMember(R"({"a":{"data":1},"data":[2, 3]})", "data"), "[2, 3]");
  EXPECT_FALSE(RawUniqueMember(R"({"data":1,"data":2})", "data").has_value());
  EXPECT_FALSE(RawUniqueMember(R"({"d\u0061ta":1})", "data").has_value());
  EXPECT_FALSE(RawUniqueMember(R"({"data":1,"x\"":2})", "data").has_value());
  EXPECT_FALSE(RawUniqueMember(R"({"other":1})", "data").has_value());
  EXPECT_EQ(RawMember(R"({"data":1,"data":2})", "data"), "1");
}

// A quote ends a string unless an odd number of backslashes precedes it.
TEST(RawJsonTest, StringsEndAtTheirUnescapedQuote) {
  EXPECT_THAT(RawElements(R"(["a\\", "b\\\"c", "\\\\", "", 1])"),
              ElementsAre(R"("a\\")", R"("b\\\"c")", R"("\\\\")", R"("")", "1"));
  EXPECT_EQ(RawMember(R"({"k\\":"v\\\"","data":2})", "data"), "2");
}

TEST(RawJsonTest, CompactDropsOnlyTheSpaceBetweenTokens) {
  EXPECT_EQ(RawCompact(" { \"a\" : [ 1.50 , true,\n\"x  y\\\" z\" ] ,\t\"b\":\"\\\\\" } "),
            R"({"a":[1.50,true,"x  y\" z"],"b":"\\"})");
  EXPECT_EQ(RawCompact("\"  \""), "\"  \"");
  EXPECT_EQ(RawCompact("{\"a\":\"x y\"}"), "{\"a\":\"x y\"}") << "a string right after ':'";
  EXPECT_EQ(RawCompact("-12e3"), "-12e3");
}

TEST(TargetTest, EncodesSegmentsAndQuery) {
  EXPECT_EQ(BuildTarget({"v1", "streams"}), "/v1/streams");
  EXPECT_EQ(BuildTarget({"v1", "streams", "a b/c", "events"}, {{"type", "x y"}, {"after", ""}}),
            "/v1/streams/a%20b%2Fc/events?type=x%20y&after=");
  // '+' would read as a space on the server: a time's offset must survive.
  EXPECT_EQ(BuildTarget({"e"}, {{"after_time", "2026-11-30T12:00:00+01:00"}, {"k&", "a=b"}}),
            "/e?after_time=2026-11-30T12%3A00%3A00%2B01%3A00&k%26=a%3Db");
}

TEST(ServerAddressTest, ParsesHostPortForms) {
  auto plain = ParseServerAddress("127.0.0.1:8080");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->host, "127.0.0.1");
  EXPECT_EQ(plain->port, 8080);
  auto url = ParseServerAddress("http://localhost:9/");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->host, "localhost");
  EXPECT_EQ(url->port, 9);
  auto v6 = ParseServerAddress("[::1]:80");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  for (const char* bad : {"localhost", ":80", "host:0", "host:70000", "host:x", "::1:80"}) {
    EXPECT_FALSE(ParseServerAddress(bad).ok()) << bad;
  }
}

TEST(ClientErrorsTest, ServerErrorsKeepCodeKindAndBody) {
  ClientResponse response;
  response.status = 410;
  response.body =
      R"({"error":{"code":"retention_gap","message":"gone","requested":"r","oldest":"o"}})";
  absl::Status status = ErrorFromResponse(response);
  EXPECT_EQ(status.message(), "retention_gap: gone");
  EXPECT_EQ(GetErrorKind(status), ErrorKind::kRetentionGap);
  auto http = GetHttpError(status);
  ASSERT_TRUE(http.has_value());
  EXPECT_EQ(http->status, 410);
  EXPECT_EQ(http->code, "retention_gap");
  EXPECT_EQ(http->message, "gone");
  EXPECT_EQ(http->body, response.body);

  response.status = 415;
  response.body = R"({"error":{"code":"unsupported_media_type","message":"json only"}})";
  status = ErrorFromResponse(response);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DescribeError(status), "unsupported_media_type: json only");

  response.status = 502;
  response.body = "<html>bad gateway</html>";
  status = ErrorFromResponse(response);
  EXPECT_EQ(GetHttpError(status)->code, "http_502");

  response.status = 201;
  EXPECT_TRUE(ErrorFromResponse(response).ok());
  EXPECT_FALSE(GetHttpError(absl::InternalError("x")).has_value());
}

}  // namespace
}  // namespace keel::client
