// RequestParser: the bytes of an HTTP/1.1 request, fed as a socket would
// deliver them, come out as the HttpRequest the API handlers read.
#include "keel/cmd/keel/server/request_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/url/parse.hpp>

#include "absl/strings/str_cat.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::server {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

// Feeds `wire` in pieces of `piece` bytes (as reads that split the request
// anywhere would); returns the parser's first error other than need_more.
boost::beast::error_code Feed(RequestParser& parser, const std::string& wire, size_t piece) {
  std::string pending;
  for (size_t at = 0; at < wire.size(); at += piece) {
    pending += wire.substr(at, piece);
    // As Beast's read loop: the parser stops after the header, and
    // continues with the body on the next call.
    while (!pending.empty() && !parser.is_done()) {
      boost::beast::error_code ec;
      const size_t used = parser.put(boost::asio::buffer(pending), ec);
      pending.erase(0, used);
      if (ec == boost::beast::http::error::need_more) break;
      if (ec) return ec;
    }
  }
  return {};
}

// A whole request parsed: its request line, keep-alive verdict and
// HttpRequest; a parser error or an unfinished request is an Internal error.
struct Parsed {
  std::string line;
  bool keep_alive = false;
  absl::StatusOr<HttpRequest> request;
};
// `request` is the one to parse into (a session reuses its own).
Parsed Parse(const std::string& wire, size_t piece, HttpRequest& request) {
  Parsed parsed;
  RequestParser parser(parsed.line, request);
  if (boost::beast::error_code ec = Feed(parser, wire, piece)) {
    parsed.request = absl::InternalError(ec.message());
  } else if (!parser.is_done()) {
    parsed.request = absl::InternalError("the request is unfinished");
  } else if (absl::Status target = parser.DecodeTarget(); !target.ok()) {
    parsed.request = target;
  } else {
    parsed.keep_alive = parser.keep_alive();
    parsed.request = request;
  }
  return parsed;
}
Parsed Parse(const std::string& wire, size_t piece = 64) {
  HttpRequest request;
  return Parse(wire, piece, request);
}

TEST(RequestParserTest, FieldsTargetAndBodyArriveWhereHandlersReadThem) {
  for (size_t piece : {size_t{1}, size_t{7}, size_t{4096}}) {
    SCOPED_TRACE(piece);
    Parsed parsed = Parse(
        "POST /v1/streams/orders%2Feu/events?tenant=c&limit=5&tenant=a%20b HTTP/1.1\r\n"
        "Host: example\r\nContent-Type: application/json\r\nX-Mixed-CASE: Value\r\n"
        "Content-Length: 11\r\n\r\n{\"type\":1}\n",
        piece);
    ASSERT_OK_AND_ASSIGN(const HttpRequest request, std::move(parsed.request));
    EXPECT_TRUE(parsed.keep_alive) << piece;
    EXPECT_EQ(parsed.line, "POST /v1/streams/orders%2Feu/events?tenant=c&limit=5&tenant=a%20b");
    EXPECT_EQ(request.method, "POST");
    EXPECT_EQ(request.path, "/v1/streams/orders%2Feu/events");
    EXPECT_THAT(request.segments, ElementsAre("v1", "streams", "orders/eu", "events"));
    EXPECT_THAT(request.query, UnorderedElementsAre(Pair("tenant", "a b"), Pair("limit", "5")));
    EXPECT_EQ(request.Header("content-type"), "application/json");
    EXPECT_EQ(request.Header("x-mixed-case"), "Value") << "names are kept lower-case";
    EXPECT_EQ(request.Header("absent"), "");
    EXPECT_EQ(request.body, "{\"type\":1}\n");
  }
}

// Plain paths are split without Boost.URL: the same path and segments.
TEST(RequestParserTest, PathsSplitAsBoostUrlDoes) {
  for (const char* target :
       {"/", "/v1/streams", "/v1/streams/orders.eu_1~-x/events", "/a/", "/a//b", "//",
        "/v1/streams/.x", "/a/./b/../c", "/a%2Fb/c", "/a?x=1", "/caf%C3%A9"}) {
    SCOPED_TRACE(target);
    ASSERT_OK_AND_ASSIGN(const HttpRequest request,
                         Parse(absl::StrCat("GET ", target, " HTTP/1.1\r\n\r\n")).request);
    auto url = boost::urls::parse_origin_form(target);
    ASSERT_TRUE(url.has_value()) << target;
    std::vector<std::string> segments;
    for (auto segment : url->segments()) segments.push_back(segment);
    EXPECT_EQ(request.segments, segments) << target;
    EXPECT_EQ(request.path, std::string(url->encoded_path())) << target;
  }
}

TEST(RequestParserTest, AChunkedBodyIsJoined) {
  ASSERT_OK_AND_ASSIGN(
      const HttpRequest request,
      Parse("POST /v1/streams/s/events HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
            "5\r\n[{\"ty\r\n9\r\npe\":\"t\"}]\r\n0\r\n\r\n",
            3)
          .request);
  EXPECT_EQ(request.body, "[{\"type\":\"t\"}]");
}

TEST(RequestParserTest, ARepeatedHeaderKeepsItsLastValue) {
  ASSERT_OK_AND_ASSIGN(
      const HttpRequest request,
      Parse("GET / HTTP/1.1\r\nIdempotency-Key: a\r\nidempotency-key: b\r\n\r\n").request);
  EXPECT_EQ(request.Header("idempotency-key"), "b");
}

TEST(RequestParserTest, KeepAliveFollowsTheVersionAndConnectionHeader) {
  const struct {
    const char* wire;
    bool keep_alive;
  } kCases[] = {
      {"GET /healthz HTTP/1.1\r\n\r\n", true},
      {"GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n", false},
      {"GET /healthz HTTP/1.0\r\n\r\n", false},
      {"GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true},
  };
  for (const auto& c : kCases) {
    const Parsed parsed = Parse(c.wire);
    ASSERT_OK(parsed.request.status()) << c.wire;
    EXPECT_EQ(parsed.keep_alive, c.keep_alive) << c.wire;
  }
}

TEST(RequestParserTest, AMalformedTargetIsAnInvalidArgument) {
  EXPECT_THAT(Parse("GET /a%zz HTTP/1.1\r\n\r\n").request,
              keel::testing::StatusIs(absl::StatusCode::kInvalidArgument));
}

// A connection parses each request into the same HttpRequest, cleared once
// answered: nothing of the last one (a header such as an idempotency key, a
// query, a body) may show in the next.
TEST(RequestParserTest, AReusedRequestKeepsNothingOfTheLastOne) {
  HttpRequest request;
  std::string many_fields;
  for (int i = 0; i < 40; ++i) absl::StrAppend(&many_fields, "X-Field-", i, ": ", i, "\r\n");
  ASSERT_OK(Parse(absl::StrCat("POST /v1/streams/a/events?tenant=t HTTP/1.1\r\n"
                               "Idempotency-Key: k1\r\n",
                               many_fields, "Content-Length: 5\r\n\r\nfirst"),
                  64, request)
                .request.status());
  ASSERT_EQ(request.Header("x-field-39"), "39");
  request.Clear();  // As the session does once it has answered.
  ASSERT_OK_AND_ASSIGN(
      const HttpRequest next,
      Parse("GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n", 64, request).request);
  EXPECT_EQ(next.method, "GET");
  EXPECT_EQ(next.path, "/healthz");
  EXPECT_THAT(next.segments, ElementsAre("healthz"));
  EXPECT_TRUE(next.query.empty());
  EXPECT_EQ(next.Header("idempotency-key"), "");
  EXPECT_EQ(next.Header("x-field-0"), "");
  EXPECT_EQ(next.Header("x-field-39"), "");
  EXPECT_EQ(next.Header("host"), "h");
  EXPECT_EQ(next.headers.size(), 1u);
  EXPECT_EQ(next.body, "");
}

// An idle kept-alive connection holds its request's storage: no more than
// a small request's, whatever the last one was (a 16 KiB path of empty
// segments would otherwise pin half a megabyte per connection).
TEST(RequestParserTest, AClearedRequestKeepsOnlyASmallRequestsStorage) {
  HttpRequest request;
  const std::string wire = absl::StrCat("POST /", std::string(4000, '/'),
                                        " HTTP/1.1\r\nContent-Length: 10000\r\n\r\n",
                                        std::string(10000, 'b'));
  ASSERT_OK(Parse(wire, 4096, request).request.status());
  ASSERT_GT(request.segments.size(), 4000u);
  request.Clear();
  EXPECT_LE(request.path.capacity(), HttpRequest::kKeptPathBytes);
  EXPECT_LE(request.segments.capacity(), HttpRequest::kKeptSegments);
  EXPECT_LE(request.body.capacity(), HttpRequest::kKeptBodyBytes);
  ASSERT_OK(Parse("GET /a/b HTTP/1.1\r\n\r\n", 64, request).request.status());
  request.Clear();
  EXPECT_GE(request.segments.capacity(), 2u) << "a small request's storage is kept";
}

TEST(RequestParserTest, ABodyOverTheLimitIsRefusedBeforeItIsRead) {
  std::string line;
  HttpRequest request;
  RequestParser parser(line, request);
  parser.body_limit(10);
  EXPECT_EQ(Feed(parser, "POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\n", 64),
            boost::beast::http::error::body_limit);
}

}  // namespace
}  // namespace keel::server
