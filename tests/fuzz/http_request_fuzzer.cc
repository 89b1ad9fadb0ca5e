// The daemon's request path without sockets: the bytes of one connection
// are parsed (RequestParser, the daemon's limits), routed (Api::Resolve) and
// answered by the API over a fresh in-memory bus, as an HTTP session does
// (cmd/keel/server/http_session.cc): publishes read together are answered
// together (Api::HandleAll, as the publish coalescer joins them), SSE
// routes are subscribed, and every answer is written as the bytes a client
// would read (WireResponse).
//
// Beyond the sanitizers, it checks what every client relies on: each answer
// has a status the daemon sends, none is a 500 (no input is the daemon's
// own failure), and a JSON answer's body is JSON.
#include <boost/json/parse.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "keel/cmd/keel/server/api.h"
#include "keel/cmd/keel/server/http_errors.h"
#include "keel/cmd/keel/server/metrics.h"
#include "keel/cmd/keel/server/wire_response.h"
#include "keel/core/logger.h"
#include "keel/drivers/memory/memory_bus.h"
#include "keel/tests/fuzz/wire_requests.h"

namespace keel::fuzz {
namespace {

// Aborts (a finding), saying which answer broke which rule.
void Fail(const server::HttpResponse& response, const char* rule) {
  std::fprintf(stderr, "answer %d breaks the rule: %s\n%s\n", response.status, rule,
               response.body.c_str());
  std::abort();
}

void CheckAnswer(const server::HttpResponse& response) {
  if (response.status < 200 || response.status > 599) Fail(response, "a status the daemon sends");
  if (response.status == 500) Fail(response, "no request is the daemon's own failure");
  if (response.content_type == "application/json" && !response.body.empty()) {
    boost::system::error_code ec;
    boost::json::parse(response.body, ec);
    if (ec) Fail(response, "a JSON answer is JSON");
  }
  std::string wire;
  server::WireResponse(response, "*", /*keep_alive=*/true, wire);
}

class Connection {
 public:
  explicit Connection(server::Api& api) : api_(api) {}

  void Serve(const WireRequest& wire) {
    if (!wire.target.ok()) {
      Flush();
      return CheckAnswer(server::ErrorResponse(400, "invalid_argument", wire.target.message()));
    }
    server::RoutedRequest routed = server::Api::Routed(wire.request);
    if (server::Api::IsPublish(routed.route)) return publishes_.push_back(routed);
    Flush();
    if (routed.route.route != nullptr && routed.route.route->streamed()) {
      absl::StatusOr<server::Api::SseStart> start =
          api_.SubscribeSse(wire.request, routed.route.params);
      if (!start.ok()) CheckAnswer(server::ErrorResponse(start.status()));
      return;
    }
    CheckAnswer(api_.Handle(wire.request, routed.route));
  }

  // Answers the publishes read so far, together.
  void Flush() {
    if (publishes_.empty()) return;
    for (const server::HttpResponse& response : api_.HandleAll(publishes_)) CheckAnswer(response);
    publishes_.clear();
  }

 private:
  server::Api& api_;
  std::vector<server::RoutedRequest> publishes_;
};

// The bus's warnings are not findings.
class QuietLogger : public Logger {
 public:
  void Log(LogLevel, absl::string_view) override {}
  bool Enabled(LogLevel) const override { return false; }
};

// Small rings: what a run publishes stays small.
constexpr MemoryRingLimits kRing{.max_events_per_stream = 64, .max_bytes_per_stream = 1 << 20};

}  // namespace
}  // namespace keel::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace keel;
  if (size == 0) return 0;
  // The first byte chooses how the bytes arrive: reads of 1 to 255 bytes,
  // or (0) all at once.
  const size_t piece = data[0];
  const absl::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  static const std::shared_ptr<Logger> quiet = std::make_shared<fuzz::QuietLogger>();
  DriverContext context;
  context.logger = quiet;
  std::unique_ptr<EventBus> bus = NewMemoryBus(fuzz::kRing, context);
  server::Metrics metrics;
  server::Api api(*bus, metrics);
  const std::vector<std::unique_ptr<fuzz::WireRequest>> requests =
      fuzz::ReadWireRequests(bytes, piece);
  fuzz::Connection connection(api);
  for (const auto& request : requests) connection.Serve(*request);
  connection.Flush();
  (void)bus->Close();
  return 0;
}
