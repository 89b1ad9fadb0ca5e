// Where an SSE stream starts: GET /v1/streams/{stream}/sse with its query
// (?after=, ?after_time=, ?tenant=, ?type=) and Last-Event-ID, over a bus
// whose stream "orders" holds events of two types and tenants. The request
// goes through the daemon's parser and router; a start the daemon refuses
// is a client error with a JSON answer, never a server error; one it
// accepts subscribes, and the first events it delivers are of the stream,
// after where it started and past its filter.
//
// Input: a first byte; when odd, Last-Event-ID is a genuine cursor of
// "orders" at the sequence of the second byte (which the fuzzer could not
// forge: the bus's epoch is random), else the first line is sent as
// Last-Event-ID (omitted when empty). The next line is the stream's path
// segment, the rest the query string.
#include <boost/json/parse.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/api.h"
#include "keel/cmd/keel/server/api_helpers.h"
#include "keel/cmd/keel/server/http_errors.h"
#include "keel/cmd/keel/server/metrics.h"
#include "keel/core/logger.h"
#include "keel/drivers/memory/memory_bus.h"
#include "keel/tests/fuzz/wire_requests.h"

namespace keel::fuzz {
namespace {

class QuietLogger : public Logger {
 public:
  void Log(LogLevel, absl::string_view) override {}
  bool Enabled(LogLevel) const override { return false; }
};

constexpr uint64_t kEvents = 6;

struct Daemon {
  Daemon() {
    DriverContext context;
    context.logger = std::make_shared<QuietLogger>();
    bus = NewMemoryBus({}, context);
    for (uint64_t i = 0; i < kEvents; ++i) {
      Event event;
      event.stream = "orders";
      event.type = i % 2 == 0 ? "order.created" : "order.paid";
      event.tenant = i % 3 == 0 ? "acme" : "";
      event.payload = "{}";
      event.content_type = "application/json";
      event.time = absl::FromUnixSeconds(1'700'000'000 + static_cast<int64_t>(i) * 60);
      if (!bus->Publish(std::move(event)).ok()) std::abort();
    }
    api = std::make_unique<server::Api>(*bus, metrics);
  }
  std::unique_ptr<EventBus> bus;
  server::Metrics metrics;
  std::unique_ptr<server::Api> api;
};

absl::string_view TakeLine(absl::string_view& rest) {
  const size_t newline = rest.find('\n');
  const absl::string_view line = rest.substr(0, newline);
  rest.remove_prefix(newline == absl::string_view::npos ? rest.size() : newline + 1);
  return line;
}

void CheckRefusal(const absl::Status& status) {
  const server::HttpResponse response = server::ErrorResponse(status);
  if (response.status < 400 || response.status >= 500) std::abort();
  boost::system::error_code ec;
  boost::json::parse(response.body, ec);
  if (ec) std::abort();
}

void CheckDelivered(const SubscribeOptions& options, Subscription& subscription) {
  absl::StatusOr<std::vector<EventPtr>> events = subscription.Poll(2 * kEvents);
  if (!events.ok()) return;
  uint64_t last = options.after.kind == Position::Kind::kCursor ? options.after.cursor.sequence : 0;
  for (const EventPtr& event : *events) {
    if (event->type == kGapNoticeType || event->type == kDroppedNoticeType) continue;
    if (event->stream != options.stream || event->sequence <= last) std::abort();
    if (!options.filter.Matches(*event)) std::abort();
    last = event->sequence;
  }
}

}  // namespace
}  // namespace keel::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace keel;
  if (size < 2) return 0;
  static fuzz::Daemon* daemon = new fuzz::Daemon();
  absl::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  std::string last_event_id;
  if (data[0] % 2 == 1) {
    last_event_id = Cursor::For("orders", server::EpochOf(*daemon->bus), data[1] % 16).Encode();
  } else {
    last_event_id = std::string(fuzz::TakeLine(rest));
  }
  const absl::string_view stream = fuzz::TakeLine(rest);
  std::string wire = absl::StrCat("GET /v1/streams/", stream, "/sse?", rest, " HTTP/1.1\r\n");
  if (!last_event_id.empty()) absl::StrAppend(&wire, "Last-Event-ID: ", last_event_id, "\r\n");
  wire += "\r\n";
  const std::vector<std::unique_ptr<fuzz::WireRequest>> requests = fuzz::ReadWireRequests(wire, 0);
  if (requests.empty() || !requests.front()->target.ok()) return 0;
  const server::HttpRequest& request = requests.front()->request;
  const server::RouteMatch route = server::Api::Resolve(request);
  if (route.route == nullptr || !route.route->streamed()) return 0;
  absl::StatusOr<server::Api::SseStart> start = daemon->api->SubscribeSse(request, route.params);
  if (!start.ok()) {
    fuzz::CheckRefusal(start.status());
    return 0;
  }
  fuzz::CheckDelivered(start->options, *start->subscription);
  start->subscription->Cancel();
  return 0;
}
