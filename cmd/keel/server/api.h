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
  // HandleAll for a thread that must not block (an I/O thread), over a bus
  // that PublishesAsync(): the joined publishes are committed through
  // EventBus::PublishBatchAsync, and their answers are made through
  // `complete_on`; whatever may block runs through `blocking`. `done` gets
  // the responses (same index) once, on the thread that answered last. The
  // requests must live until then.
  using Executor = std::function<void(std::function<void()>)>;
  using AllDone = std::function<void(std::vector<HttpResponse>)>;
  void HandleAllAsync(absl::Span<const HttpRequest* const> requests, const Executor& blocking,
                      const Executor& complete_on, AllDone done);
  bool PublishesAsync() const { return bus_.PublishesAsync(); }
  // Whether `request` is a publish (POST /v1/streams/{stream}/events), the
  // requests a server hands to HandleAll.
  static bool IsPublish(const HttpRequest& request);

  static bool IsSse(const HttpRequest& request);
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
  // Counted(handler()), or Thrown() when it throws.
  HttpResponse Guarded(absl::FunctionRef<HttpResponse()> handler);
  // The counted 500 answer to an exception from the driver.
  HttpResponse Thrown(const std::exception& e);
  // Sorts a pass of requests (HandleAll): the joinable publishes go to
  // `parsed` and, by the returned index groups, are to be committed
  // together; errors are answered in `responses`; every other request is
  // handed to `alone` with the call that answers it (it may block).
  std::vector<std::vector<size_t>> PlanJoined(
      absl::Span<const HttpRequest* const> requests,
      std::vector<std::optional<ParsedPublish>>& parsed, std::vector<HttpResponse>& responses,
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
  // retried alone (Route), for the answer it would have had.
  std::optional<std::vector<HttpResponse>> AnswerJoined(
      absl::Span<const ParsedPublish> publishes,
      const absl::StatusOr<std::vector<Receipt>>& receipts);
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
