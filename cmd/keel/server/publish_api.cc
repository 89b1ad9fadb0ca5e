// The publish route of Api: POST /v1/streams/{stream}/events, alone
// (Handle) or joined with the other publishes an I/O thread read at once
// (HandleAll), and the per-partition publish of a topic.
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/api.h"
#include "keel/cmd/keel/server/api_helpers.h"
#include "keel/cmd/keel/server/grant_filters.h"
#include "keel/cmd/keel/server/http_errors.h"
#include "keel/cmd/keel/server/json_codec.h"
#include "keel/core/errors.h"
#include "keel/core/publish_validation.h"
#include "keel/core/topic.h"

namespace keel::server {
namespace {

// A joined batch stays well inside the bus's batch limits (10,000 events,
// 16 MiB), so joining never turns acceptable publishes into a refused batch.
constexpr size_t kMaxJoinedEvents = 1000;
constexpr size_t kMaxJoinedBodyBytes = 1 << 20;

}  // namespace

HttpResponse Api::Publish(const HttpRequest& request, const RouteParams& params) {
  std::variant<ParsedPublish, HttpResponse> parsed = ParsePublish(params.Get("stream"), request);
  if (HttpResponse* error = std::get_if<HttpResponse>(&parsed)) return std::move(*error);
  return PublishAlone(std::get<ParsedPublish>(parsed));
}

HttpResponse Api::PublishAlone(ParsedPublish& publish) {
  if (publish.topic) return PublishToTopic(publish.stream, std::move(publish.body));
  return std::move(PublishTogether(absl::MakeSpan(&publish, 1)).front());
}

std::variant<ParsedPublish, HttpResponse> Api::ParsePublish(absl::string_view stream,
                                                            const HttpRequest& request) {
  ParsedPublish publish;
  publish.start = absl::Now();
  publish.request = &request;
  publish.stream = std::string(stream);
  if (!absl::StartsWithIgnoreCase(request.Header("content-type"), kJsonContentType)) {
    return ErrorResponse(415, "unsupported_media_type",
                         "publish bodies must be application/json");
  }
  absl::StatusOr<PublishBody> body =
      ParsePublishBody(request.body, request.Header("idempotency-key"),
                       request.Header("keel-expected-last-sequence"));
  if (!body.ok()) return Error(body.status(), stream);
  if (absl::Status own = StampTenant(request, body->events); !own.ok()) return ErrorResponse(own);
  absl::StatusOr<StreamPolicy> policy = bus_.PolicyOf(stream);
  if (!policy.ok()) return Error(policy.status(), stream);
  publish.topic = policy->partitions > 0;
  for (const std::string& key : body->partition_keys) {
    if (!publish.topic && !key.empty()) {
      return ErrorResponse(InvalidArgument(absl::StrCat(
          "partitionKey applies to topics declared with partitions; '", stream, "' is not one")));
    }
  }
  for (const Event& event : body->events) publish.bytes += event.payload.size();
  publish.body = *std::move(body);
  return publish;
}

bool Api::Joinable(const ParsedPublish& publish) {
  return !publish.topic && !publish.body.expected_last_sequence;
}

std::vector<HttpResponse> Api::PublishTogether(absl::Span<ParsedPublish> publishes) {
  PublishOptions options;
  std::vector<Event> events = JoinedEvents(publishes, options);
  absl::StatusOr<std::vector<Receipt>> receipts =
      bus_.PublishBatch(publishes.front().stream, std::move(events), options);
  std::optional<std::vector<HttpResponse>> answers = AnswerJoined(publishes, receipts);
  if (answers) return *std::move(answers);
  // Nothing was stored (a failed batch consumes no sequence); each
  // publish now gets the answer it would have had alone.
  std::vector<HttpResponse> responses;
  for (const ParsedPublish& publish : publishes) {
    responses.push_back(Serve(*publish.request, Resolve(*publish.request)));
  }
  return responses;
}

std::vector<Event> Api::JoinedEvents(absl::Span<ParsedPublish> publishes, PublishOptions& options) {
  std::vector<Event> events;
  size_t total = 0;
  for (const ParsedPublish& publish : publishes) total += publish.body.events.size();
  events.reserve(total);
  for (ParsedPublish& publish : publishes) {
    for (Event& event : publish.body.events) events.push_back(std::move(event));
  }
  if (publishes.size() == 1) {
    options.expected_last_sequence = publishes.front().body.expected_last_sequence;
  }
  return events;
}

std::optional<std::vector<HttpResponse>> Api::AnswerJoined(
    absl::Span<const ParsedPublish> publishes,
    const absl::StatusOr<std::vector<Receipt>>& receipts) {
  std::vector<HttpResponse> responses;
  responses.reserve(publishes.size());
  if (!receipts.ok() && publishes.size() > 1) return std::nullopt;
  if (!receipts.ok()) {
    responses.push_back(Error(receipts.status(), publishes.front().stream));
    return responses;
  }
  const absl::Span<const Receipt> all(*receipts);
  size_t at = 0;
  for (const ParsedPublish& publish : publishes) {
    const size_t count = publish.body.events.size();  // Moved from, not resized.
    const absl::Span<const Receipt> mine = all.subspan(at, count);
    at += count;
    metrics_.CountPublished(count, publish.bytes);
    metrics_.publish_latency().Observe(absl::Now() - publish.start);
    responses.push_back(
        JsonResponse(201, publish.body.was_array ? ReceiptsJson(mine) : ReceiptJson(mine[0])));
  }
  return responses;
}

std::vector<HttpResponse> Api::HandleAll(absl::Span<const RoutedRequest> requests) {
  std::vector<HttpResponse> responses(requests.size());
  std::vector<std::optional<ParsedPublish>> parsed(requests.size());
  auto alone = [&](size_t i, const std::function<HttpResponse()>& answer) {
    responses[i] = answer();
  };
  for (const std::vector<size_t>& group : PlanJoined(requests, parsed, responses, alone)) {
    CommitJoined(group, parsed, responses);
  }
  return responses;
}

std::vector<std::vector<size_t>> Api::PlanJoined(
    absl::Span<const RoutedRequest> requests, std::vector<std::optional<ParsedPublish>>& parsed,
    std::vector<HttpResponse>& responses,
    absl::FunctionRef<void(size_t, std::function<HttpResponse()>)> alone) {
  // Joinable publishes by stream, in arrival order within each stream.
  std::map<absl::string_view, std::vector<size_t>> by_stream;
  for (size_t i = 0; i < requests.size(); ++i) {
    const HttpRequest& request = *requests[i].request;
    const RouteMatch& route = requests[i].route;
    const absl::string_view stream = route.params.Get("stream");
    if (!IsPublish(route) || !ValidateStreamName(stream).ok()) {
      alone(i, [this, &request] { return Handle(request); });
      continue;
    }
    metrics_.CountRequest();
    try {
      std::variant<ParsedPublish, HttpResponse> publish = ParsePublish(stream, request);
      if (HttpResponse* error = std::get_if<HttpResponse>(&publish)) {
        responses[i] = Counted(std::move(*error));
      } else if (!Joinable(std::get<ParsedPublish>(publish))) {
        auto shared = std::make_shared<ParsedPublish>(std::get<ParsedPublish>(std::move(publish)));
        alone(i, [this, shared] { return Guarded([&] { return PublishAlone(*shared); }); });
      } else {
        parsed[i] = std::get<ParsedPublish>(std::move(publish));
        by_stream[stream].push_back(i);
      }
    } catch (const std::exception& e) {  // From the driver: see the class comment.
      responses[i] = Thrown(e);
    }
  }
  std::vector<std::vector<size_t>> groups;
  for (const auto& entry : by_stream) {
    size_t events = 0;
    size_t bytes = 0;
    groups.emplace_back();
    for (size_t i : entry.second) {
      const size_t more_events = parsed[i]->body.events.size();
      const size_t more_bytes = requests[i].request->body.size();
      if (!groups.back().empty() &&
          (events + more_events > kMaxJoinedEvents || bytes + more_bytes > kMaxJoinedBodyBytes)) {
        groups.emplace_back();
        events = bytes = 0;
      }
      events += more_events;
      bytes += more_bytes;
      groups.back().push_back(i);
    }
  }
  return groups;
}

std::vector<ParsedPublish> Api::TakeJoined(absl::Span<const size_t> indices,
                                           std::vector<std::optional<ParsedPublish>>& parsed) {
  std::vector<ParsedPublish> group;
  group.reserve(indices.size());
  for (size_t i : indices) group.push_back(*std::move(parsed[i]));
  return group;
}

void Api::CommitJoined(absl::Span<const size_t> indices,
                       std::vector<std::optional<ParsedPublish>>& parsed,
                       std::vector<HttpResponse>& responses) {
  std::vector<ParsedPublish> group = TakeJoined(indices, parsed);
  try {
    std::vector<HttpResponse> answers = PublishTogether(absl::MakeSpan(group));
    for (size_t k = 0; k < indices.size(); ++k) {
      responses[indices[k]] = Counted(std::move(answers[k]));
    }
  } catch (const std::exception& e) {  // From the driver: see the class comment.
    for (size_t i : indices) responses[i] = Thrown(e);
  }
}

// A topic publish: each partition's part succeeds or fails on its own, so a
// batch answers 201 when every event was stored and 207 with an error in
// place of each failed event's receipt otherwise.
HttpResponse Api::PublishToTopic(const std::string& topic, PublishBody body) {
  if (body.expected_last_sequence) {
    return ErrorResponse(InvalidArgument(
        "expectedLastSequence applies to one stream, not to a partitioned topic"));
  }
  const bool was_array = body.was_array;
  std::vector<uint64_t> bytes;
  for (const Event& event : body.events) bytes.push_back(event.payload.size());
  absl::StatusOr<std::vector<absl::StatusOr<Receipt>>> results =
      keel::PublishToTopic(bus_, topic, std::move(body.events), body.partition_keys);
  if (!results.ok()) return Error(results.status(), topic);
  if (!was_array) {
    const absl::StatusOr<Receipt>& only = results->front();
    if (!only.ok()) return Error(only.status(), topic);
    metrics_.CountPublished(1, bytes.front());
    return JsonResponse(201, ReceiptJson(*only));
  }
  bool all_ok = true;
  std::string out = "{\"receipts\":[";
  for (size_t i = 0; i < results->size(); ++i) {
    if (i > 0) out.push_back(',');
    const absl::StatusOr<Receipt>& result = (*results)[i];
    all_ok = all_ok && result.ok();
    if (result.ok()) {
      AppendReceiptJson(*result, out);
      metrics_.CountPublished(1, bytes[i]);
    } else {
      out += ErrorResponse(result.status()).body;
    }
  }
  out += "]}";
  return JsonResponse(all_ok ? 201 : 207, std::move(out));
}

}  // namespace keel::server
