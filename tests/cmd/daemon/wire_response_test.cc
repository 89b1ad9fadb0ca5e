// WireResponse's bytes read back as the response they encode, by Beast's
// own parser (what any HTTP/1.1 client does with them).
#include <gtest/gtest.h>

#include <boost/beast/http.hpp>

#include "keel/cmd/keel/server/wire_response.h"

namespace keel::server {
namespace {

namespace http = boost::beast::http;

std::string Wire(const HttpResponse& response, absl::string_view cors_origin, bool keep_alive) {
  std::string out = "left over from an earlier response";
  WireResponse(response, cors_origin, keep_alive, out);
  return out;
}

http::response<http::string_body> Parse(const std::string& wire) {
  http::response_parser<http::string_body> parser;
  parser.eager(true);
  boost::beast::error_code ec;
  const size_t used = parser.put(boost::asio::buffer(wire), ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_TRUE(parser.is_done());
  EXPECT_EQ(used, wire.size()) << "bytes after the response";
  return parser.release();
}

TEST(WireResponseTest, ABodyResponseReadsBackWithItsHeaders) {
  HttpResponse response;
  response.status = 201;
  response.body = R"({"sequence":1})";
  response.headers = {{"Allow", "GET"}};

  http::response<http::string_body> parsed = Parse(Wire(response, "*", true));

  EXPECT_EQ(parsed.result_int(), 201);
  EXPECT_EQ(parsed.reason(), "Created");
  EXPECT_EQ(parsed[http::field::content_type], "application/json");
  EXPECT_EQ(parsed[http::field::access_control_allow_origin], "*");
  EXPECT_EQ(parsed[http::field::allow], "GET");
  EXPECT_EQ(parsed.body(), R"({"sequence":1})");
  EXPECT_TRUE(parsed.keep_alive());
}

TEST(WireResponseTest, ClosingAndNoCorsOrigin) {
  HttpResponse response;
  response.status = 503;
  response.body = "{}";

  http::response<http::string_body> parsed = Parse(Wire(response, "", false));

  EXPECT_EQ(parsed.result_int(), 503);
  EXPECT_FALSE(parsed.keep_alive());
  EXPECT_EQ(parsed.count(http::field::access_control_allow_origin), 0u);
}

TEST(WireResponseTest, NoContentHasNoBodyOrLength) {
  HttpResponse response;
  response.status = 204;

  const std::string wire = Wire(response, "*", true);
  http::response<http::string_body> parsed = Parse(wire);

  EXPECT_EQ(parsed.result_int(), 204);
  EXPECT_EQ(parsed.count(http::field::content_length), 0u);
  EXPECT_EQ(wire.substr(wire.size() - 4), "\r\n\r\n");
}

}  // namespace
}  // namespace keel::server
