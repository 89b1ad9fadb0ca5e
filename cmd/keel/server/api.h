// Api: the HTTP API v1 handlers over one EventBus (rfcs/0004-http-api.md).
//
// Handle() serves every plain request/response route; it may block (store
// reads, publishes waiting for their fsync) and is therefore run on the
// server's blocking pool, never on an I/O thread. SSE requests are
// recognised by IsSse() and subscribed by SubscribeSse(); the session layer
// then streams them.
//
// No method throws. An exception from the bus (a host's driver may throw)
// answers 500 `internal` to the requests it was serving and to no others, so
// it never leaves a request unanswered or ends a server thread.
//
// Thread safety: all methods are safe to call concurrently.
#ifndef KEEL_CMD_KEEL_SERVER_API_H_
#define KEEL_CMD_KEEL_SERVER_API_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "cmd/keel/server/http_types.h"
#include "cmd/keel/server/metrics.h"
#include "cmd/keel/server/publish_body.h"
#include "core/event_bus.h"

namespace keel::server {

// A publish request taken apart, to be committed alone or together with
// other publishes to the same stream (Api::HandleAll).
struct ParsedPublish {
  const HttpRequest* request = nullptr;
  std::string stream;
  PublishBody body;
  bool topic = false;      // The stream is a partitioned topic.
  uint64_t bytes = 0;      // Payload bytes, for the metrics.
  absl::Time start;        // When parsing began, for the latency metric.
};

class Api {
 public:
  Api(EventBus& bus, Metrics& metrics) : bus_(bus), metrics_(metrics) {}

  HttpResponse Handle(const HttpRequest& request);

  // Answers `requests` as Handle would, one response for each (same index),
  // but commits the publishes to one stream among them together, as one
  // PublishBatch, in the order given: a server passes the requests its I/O
  // thread read at once (from different connections, so in no defined order
  // among themselves) to share one store write. Requests that cannot be
  // joined are answered first, each alone. A joined publish answers as if
  // alone; should the joined batch fail, each is retried alone, so a bad
  // event fails only its own request.
  std::vector<HttpResponse> HandleAll(absl::Span<const HttpRequest* const> requests);
  // Whether `request` is a publish (POST /v1/streams/{stream}/events), the
  // requests a server hands to HandleAll.
  static bool IsPublish(const HttpRequest& request);

  bool IsSse(const HttpRequest& request) const;
  // The subscription an SSE request asks for: resume from Last-Event-ID,
  // else ?after= (earliest | latest (default) | cursor), filtered by
  // ?tenant= and ?type=; subscribed. It may read the store (the stream's
  // bounds, `after_time`). Errors map through ErrorResponse.
  struct SseStart {
    SubscribeOptions options;
    std::unique_ptr<Subscription> subscription;
  };
  absl::StatusOr<SseStart> SubscribeSse(const HttpRequest& request);

  // /readyz answers 503 from now on.
  void SetDraining() { draining_.store(true); }

  EventBus& bus() { return bus_; }
  Metrics& metrics() { return metrics_; }

 private:
  HttpResponse Route(const HttpRequest& request);
  // Counts the error code of a failed response.
  HttpResponse Counted(HttpResponse response);
  HttpResponse Publish(const std::string& stream, const HttpRequest& request);
  // Parses and checks a publish to `stream`: the publish, or the error answer.
  std::variant<ParsedPublish, HttpResponse> ParsePublish(const std::string& stream,
                                                         const HttpRequest& request);
  // Answers a parsed publish on its own (a topic's per partition).
  HttpResponse PublishAlone(ParsedPublish& publish);
  // Whether `publish` may join others: a publish to a plain stream without
  // an expected last sequence (ParsePublishBody already refused empty ones).
  static bool Joinable(const ParsedPublish& publish);
  // A publish HandleAll may join with others, parsed; or nullopt with
  // `answer` set (an error, or the answer of a publish that cannot join).
  std::optional<ParsedPublish> TakeJoinable(const HttpRequest& request, HttpResponse& answer);
  // Commits the publishes `parsed[indices]` (one stream, in order) together
  // and puts their answers in `responses[indices]`.
  void CommitJoined(absl::Span<const size_t> indices,
                    std::vector<std::optional<ParsedPublish>>& parsed,
                    std::vector<HttpResponse>& responses);
  // Commits `publishes` (one stream, in order) as one PublishBatch.
  std::vector<HttpResponse> PublishTogether(absl::Span<ParsedPublish> publishes);
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
  absl::StatusOr<SubscribeOptions> SseSubscribeOptions(const HttpRequest& request) const;
  // An error response with details for errors that carry them.
  HttpResponse Error(const absl::Status& status, const std::string& stream) const;

  EventBus& bus_;
  Metrics& metrics_;
  std::atomic<bool> draining_{false};
};

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_API_H_
