// Inputs the fuzz targets (tests/fuzz/) found to break a rule of the API,
// fed to the same functions: each is answered as a client can read it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "keel/cmd/keel/server/http_errors.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

using ::testing::HasSubstr;

// http_request_fuzzer: an SSE request whose Last-Event-ID holds bytes that
// are not UTF-8 was refused with a message quoting them as they came, in
// an answer that was not JSON.
TEST(MalformedInputTest, ALastEventIdThatIsNotUtf8IsRefusedInJson) {
  InProcessDaemon daemon;
  ASSERT_OK(daemon.Start());
  server::HttpRequest request;
  request.method = "GET";
  request.path = "/v1/streams/orders/sse";
  request.segments = {"v1", "streams", "orders", "sse"};
  request.headers.Add("Last-Event-ID",
                      "AVRI0niQq83vABJdklC-i0wAA\xff\xff\xff\xff"
                      "AAAAKmZ3");
  const server::RouteMatch route = server::Api::Resolve(request);
  ASSERT_NE(route.route, nullptr);

  absl::StatusOr<server::Api::SseStart> start = daemon.api().SubscribeSse(request, route.params);
  ASSERT_FALSE(start.ok());
  const server::HttpResponse response = server::ErrorResponse(start.status());
  EXPECT_EQ(response.status, 400);
  boost::system::error_code ec;
  const json::value answer = json::parse(response.body, ec);
  ASSERT_FALSE(ec) << "not JSON: " << response.body;
  EXPECT_EQ(answer.at("error").at("code").as_string(), "invalid_cursor");
  EXPECT_THAT(std::string(answer.at("error").at("message").as_string()),
              HasSubstr("wAA\xef\xbf\xbd\xef\xbf\xbd"));
}

}  // namespace
}  // namespace keel::daemon_test
