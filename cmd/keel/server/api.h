// Api: the HTTP API v1 handlers over one EventBus (rfcs/0004-http-api.md).
//
// Every route is a line of one table (api_routes.cc, a RouteTable): its
// method, path pattern, the access it needs and its handler, an Api method
// of one signature. Resolve() matches a request against it; the session
// checks the route's access (RequestGate), hands publishes to HandleAll,
// streams SSE routes (SubscribeSse) and serves the rest with Handle().
// Handle may block (store reads, publishes waiting for their fsync) and is
// therefore run on the server's blocking pool, never on an I/O thread.
//
// No method throws. An exception from the bus (a host's driver may throw)
// answers 500 `internal` to the requests it was serving and to no others, so
// it never leaves a request unanswered or ends a server thread.
//
// Thread safety: all methods are safe to call concurrently.
#ifndef KEEL_CMD_KEEL_SERVER_API_H_
#define KEEL_CMD_KEEL_SERVER_API_H_

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "keel/cmd/keel/server/http_types.h"
#include "keel/cmd/keel/server/metrics.h"
#include "keel/cmd/keel/server/publish_body.h"
#include "keel/cmd/keel/server/route_table.h"
#include "keel/core/event_bus.h"

namespace keel::push {
class PushService;
}  // namespace keel::push

namespace keel::server {

// A request and the route it resolved to (Api::Resolve), which refers to
// it: a server resolves each request once.
struct RoutedRequest {
  const HttpRequest* request = nullptr;
  RouteMatch route;
};

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

  // The route `request` asks for (rfcs/0004-http-api.md §3), or why none
  // serves it. The match refers to the request: it lives as long.
  static RouteMatch Resolve(const HttpRequest& request);
  // `request` with its route.
  static RoutedRequest Routed(const HttpRequest& request) { return {&request, Resolve(request)}; }
  // Every route (the table, in matching order).
  static absl::Span<const Route> Routes();

  // Answers `request`, which `route` resolved (Resolve); the first form
  // resolves it.
  HttpResponse Handle(const HttpRequest& request) { return Handle(request, Resolve(request)); }
  HttpResponse Handle(const HttpRequest& request, const RouteMatch& route);

  // Answers `requests` (each with its route, as the server resolved it) as
  // Handle would, one response for each (same index), but commits the
  // publishes to one stream among them together, as one PublishBatch, in
  // the order given: a server passes the requests its I/O thread read at
  // once (from different connections, so in no defined order among
  // themselves) to share one store write. Requests that cannot be joined
  // are answered first, each alone. A joined publish answers as if alone;
  // should the joined batch fail, each is retried alone, so a bad event
  // fails only its own request.
  std::vector<HttpResponse> HandleAll(absl::Span<const RoutedRequest> requests);
  // HandleAll for a thread that must not block (an I/O thread), over a bus
  // that PublishesAsync(): the joined publishes are committed through
  // EventBus::PublishBatchAsync, and their answers are made through
  // `complete_on`; whatever may block runs through `blocking`. `done` gets
  // the responses (same index) once, on the thread that answered last. The
  // requests (not the span) must live until then.
  using Executor = std::function<void(std::function<void()>)>;
  using AllDone = std::function<void(std::vector<HttpResponse>)>;
  void HandleAllAsync(absl::Span<const RoutedRequest> requests, const Executor& blocking,
                      const Executor& complete_on, AllDone done);
  bool PublishesAsync() const { return bus_.PublishesAsync(); }
  // Whether `route` is the publish route (POST /v1/streams/{stream}/events),
  // whose requests a server hands to HandleAll.
  static bool IsPublish(const RouteMatch& route);

  // The subscription of a request to the SSE route (a streamed one,
  // Route::streamed): resume from Last-Event-ID, else ?after= (earliest |
  // latest (default) | cursor), filtered by ?tenant= and ?type=;
  // subscribed. It may read the store (the stream's bounds, `after_time`).
  // Errors map through ErrorResponse.
  struct SseStart {
    SubscribeOptions options;
    std::unique_ptr<Subscription> subscription;
  };
  absl::StatusOr<SseStart> SubscribeSse(const HttpRequest& request, const RouteParams& params);

  // /readyz answers 503 from now on.
  void SetDraining() { draining_.store(true); }

  EventBus& bus() { return bus_; }
  Metrics& metrics() { return metrics_; }
  // The push subscriptions /v1/subscriptions serves (push/push_service.h);
  // without one those routes answer 501. Set before the server starts; it
  // must outlive the Api.
  void set_push(push::PushService* push) { push_ = push; }
  // More of /metrics: `text` is called on each scrape, from any thread, and
  // returns Prometheus text exposition. Added before the server starts.
  void add_metrics(std::function<std::string()> text) { metrics_texts_.push_back(std::move(text)); }

 private:
  // The table behind Resolve and Routes (api_routes.cc).
  static const RouteTable& Table();
  // Handle, uncounted and unguarded: the preflight, the stream name, 404
  // and 405, else the route's handler.
  HttpResponse Serve(const HttpRequest& request, const RouteMatch& route);
  // Counts the error code of a failed response.
  HttpResponse Counted(HttpResponse response);

  // The route handlers (RouteHandler), by route in api_routes.cc.
  HttpResponse Health(const HttpRequest& request, const RouteParams& params);
  HttpResponse Ready(const HttpRequest& request, const RouteParams& params);
  HttpResponse MetricsText(const HttpRequest& request, const RouteParams& params);
  HttpResponse ListStreams(const HttpRequest& request, const RouteParams& params);
  HttpResponse Bounds(const HttpRequest& request, const RouteParams& params);
  HttpResponse CursorAt(const HttpRequest& request, const RouteParams& params);
  // Collections (collections_api.cc).
  HttpResponse PutDocument(const HttpRequest& request, const RouteParams& params);
  HttpResponse GetDocument(const HttpRequest& request, const RouteParams& params);
  HttpResponse DeleteDocument(const HttpRequest& request, const RouteParams& params);
  HttpResponse DocumentHistory(const HttpRequest& request, const RouteParams& params);
  HttpResponse Declare(const HttpRequest& request, const RouteParams& params);
  HttpResponse DeleteStream(const HttpRequest& request, const RouteParams& params);
  HttpResponse Publish(const HttpRequest& request, const RouteParams& params);
  HttpResponse Replay(const HttpRequest& request, const RouteParams& params);
  // groups_api.cc (rfcs/0005-consumer-groups.md).
  HttpResponse ListGroups(const HttpRequest& request, const RouteParams& params);
  HttpResponse DescribeGroup(const HttpRequest& request, const RouteParams& params);
  HttpResponse ConsumeGroup(const HttpRequest& request, const RouteParams& params);
  HttpResponse CommitGroup(const HttpRequest& request, const RouteParams& params);
  HttpResponse SeekGroup(const HttpRequest& request, const RouteParams& params);
  // dead_letters_api.cc.
  HttpResponse ListDeadLetters(const HttpRequest& request, const RouteParams& params);
  HttpResponse ShowDeadLetter(const HttpRequest& request, const RouteParams& params);
  HttpResponse RepublishDeadLetter(const HttpRequest& request, const RouteParams& params);
  // push/subscriptions_api.cc (rfcs/0010-push-subscriptions.md).
  HttpResponse CreateSubscription(const HttpRequest& request, const RouteParams& params);
  HttpResponse ListSubscriptions(const HttpRequest& request, const RouteParams& params);
  HttpResponse DescribeSubscription(const HttpRequest& request, const RouteParams& params);
  HttpResponse PauseSubscription(const HttpRequest& request, const RouteParams& params);
  HttpResponse ResumeSubscription(const HttpRequest& request, const RouteParams& params);
  HttpResponse RotateSubscriptionSecrets(const HttpRequest& request, const RouteParams& params);
  HttpResponse RedriveSubscription(const HttpRequest& request, const RouteParams& params);
  HttpResponse DeleteSubscription(const HttpRequest& request, const RouteParams& params);
  // The push side of /metrics; "" without push subscriptions.
  std::string PushMetrics();

  // Parses and checks a publish to `stream`: the publish, or the error answer.
  std::variant<ParsedPublish, HttpResponse> ParsePublish(absl::string_view stream,
                                                         const HttpRequest& request);
  // Answers a parsed publish on its own (a topic's per partition).
  HttpResponse PublishAlone(ParsedPublish& publish);
  // Whether `publish` may join others: a publish to a plain stream without
  // an expected last sequence (ParsePublishBody already refused empty ones).
  static bool Joinable(const ParsedPublish& publish);
  // Counted(handler()), or Thrown() when it throws.
  HttpResponse Guarded(absl::FunctionRef<HttpResponse()> handler);
  // The counted 500 answer to an exception from the driver.
  HttpResponse Thrown(const std::exception& e);
  // Sorts a pass of requests (HandleAll): the joinable publishes go to
  // `parsed` and, by the returned index groups, are to be committed
  // together; errors are answered in `responses`; every other request is
  // handed to `alone` with the call that answers it (it may block).
  std::vector<std::vector<size_t>> PlanJoined(
      absl::Span<const RoutedRequest> requests, std::vector<std::optional<ParsedPublish>>& parsed,
      std::vector<HttpResponse>& responses,
      absl::FunctionRef<void(size_t, std::function<HttpResponse()>)> alone);
  // The publishes `parsed[indices]`, moved out, in order.
  static std::vector<ParsedPublish> TakeJoined(absl::Span<const size_t> indices,
                                               std::vector<std::optional<ParsedPublish>>& parsed);
  // Commits the publishes `parsed[indices]` (one stream, in order) together
  // and puts their answers in `responses[indices]`.
  void CommitJoined(absl::Span<const size_t> indices,
                    std::vector<std::optional<ParsedPublish>>& parsed,
                    std::vector<HttpResponse>& responses);
  struct AsyncPass;
  // CommitJoined through PublishBatchAsync (HandleAllAsync).
  void CommitJoinedAsync(const std::shared_ptr<AsyncPass>& pass, std::vector<size_t> indices,
                         std::vector<std::optional<ParsedPublish>>& parsed,
                         const Executor& blocking, const Executor& complete_on);
  // Commits `publishes` (one stream, in order) as one PublishBatch.
  std::vector<HttpResponse> PublishTogether(absl::Span<ParsedPublish> publishes);
  // The events of `publishes` as one batch (moved out of them), and its options.
  static std::vector<Event> JoinedEvents(absl::Span<ParsedPublish> publishes,
                                         PublishOptions& options);
  // The answers of `publishes` committed together with the outcome
  // `receipts`; nullopt when the joined batch failed and each must be
  // retried alone (Serve), for the answer it would have had.
  std::optional<std::vector<HttpResponse>> AnswerJoined(
      absl::Span<const ParsedPublish> publishes,
      const absl::StatusOr<std::vector<Receipt>>& receipts);
  HttpResponse PublishToTopic(const std::string& topic, PublishBody body);
  // ?after= (earliest | latest | cursor; `fallback` when absent),
  // ?after_time= (RFC 3339: before the first event of `stream` published at
  // or after it) or ?after_sequence= (a sequence, checked as a cursor).
  absl::StatusOr<Position> StartPosition(const HttpRequest& request, absl::string_view stream,
                                         absl::string_view fallback) const;
  // The cursor at the sequence in query `parameter` (CursorAtSequence).
  absl::StatusOr<Cursor> CursorOfQuery(const HttpRequest& request, absl::string_view parameter,
                                       absl::string_view stream) const;
  absl::StatusOr<SubscribeOptions> SseSubscribeOptions(const HttpRequest& request,
                                                       absl::string_view stream) const;
  // An error response with details for errors that carry them.
  HttpResponse Error(const absl::Status& status, absl::string_view stream) const;

  EventBus& bus_;
  Metrics& metrics_;
  push::PushService* push_ = nullptr;
  std::vector<std::function<std::string()>> metrics_texts_;
  std::atomic<bool> draining_{false};
};

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_API_H_
