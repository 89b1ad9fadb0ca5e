// Api: the HTTP API v1 handlers over one EventBus (rfcs/0004-http-api.md).
//
// Handle() serves every plain request/response route; it may block (store
// reads, publishes waiting for their fsync) and is therefore run on the
// server's blocking pool, never on an I/O thread. SSE requests are
// recognised by IsSse() and validated by SseSubscribeOptions(); the session
// layer then streams them.
//
// Thread safety: all methods are safe to call concurrently.
#ifndef KEEL_CMD_KEEL_SERVER_API_H_
#define KEEL_CMD_KEEL_SERVER_API_H_

#include <atomic>
#include <string>

#include "absl/status/statusor.h"
#include "cmd/keel/server/http_types.h"
#include "cmd/keel/server/metrics.h"
#include "cmd/keel/server/publish_body.h"
#include "core/event_bus.h"

namespace keel::server {

class Api {
 public:
  Api(EventBus& bus, Metrics& metrics) : bus_(bus), metrics_(metrics) {}

  HttpResponse Handle(const HttpRequest& request);

  bool IsSse(const HttpRequest& request) const;
  // The subscription an SSE request asks for: resume from Last-Event-ID,
  // else ?after= (earliest | latest (default) | cursor), filtered by
  // ?tenant= and ?type=. Errors map through ErrorResponse.
  absl::StatusOr<SubscribeOptions> SseSubscribeOptions(const HttpRequest& request) const;

  // /readyz answers 503 from now on.
  void SetDraining() { draining_.store(true); }

  EventBus& bus() { return bus_; }
  Metrics& metrics() { return metrics_; }

 private:
  HttpResponse Route(const HttpRequest& request);
  HttpResponse Publish(const std::string& stream, const HttpRequest& request);
  HttpResponse PublishToTopic(const std::string& topic, PublishBody body);
  HttpResponse Declare(const std::string& stream, const HttpRequest& request);
  HttpResponse Replay(const std::string& stream, const HttpRequest& request);
  HttpResponse Bounds(const std::string& stream);
  HttpResponse ListStreams(const HttpRequest& request);
  HttpResponse Ready() const;
  // ?after= (earliest | latest | cursor; `fallback` when absent) or
  // ?after_time= (RFC 3339: before the first event published at or after it).
  absl::StatusOr<Position> StartPosition(const HttpRequest& request,
                                         absl::string_view fallback) const;
  // An error response with details for errors that carry them.
  HttpResponse Error(const absl::Status& status, const std::string& stream) const;

  EventBus& bus_;
  Metrics& metrics_;
  std::atomic<bool> draining_{false};
};

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_API_H_
