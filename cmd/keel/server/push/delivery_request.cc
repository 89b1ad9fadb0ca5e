#include "keel/cmd/keel/server/push/delivery_request.h"

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/json_codec.h"
#include "keel/cmd/keel/server/push/signature.h"

namespace keel::push {

std::string DeliveryBody(absl::string_view subscription, absl::string_view stream,
                         absl::Span<const Event> events, uint64_t epoch) {
  std::string body = "{\"subscription\":";
  server::AppendJsonString(subscription, body);
  body += ",\"stream\":";
  server::AppendJsonString(stream, body);
  body += ",\"events\":[";
  for (size_t i = 0; i < events.size(); ++i) {
    if (i > 0) body.push_back(',');
    server::AppendEventJson(events[i], epoch, body);
  }
  body += "]}";
  return body;
}

client::Headers DeliveryHeaders(absl::string_view subscription, absl::string_view stream,
                                absl::Span<const Event> events, int attempt,
                                const std::vector<std::string>& secrets, absl::string_view body,
                                absl::Time now) {
  std::string ids;
  for (const Event& event : events) {
    if (!ids.empty()) ids.push_back(',');
    ids += event.id;
  }
  const int64_t timestamp = absl::ToUnixSeconds(now);
  return {{"Content-Type", "application/json"},
          {"Keel-Subscription", std::string(subscription)},
          {"Keel-Stream", std::string(stream)},
          {"Keel-Event-Ids", std::move(ids)},
          {"Keel-Delivery-Attempt", absl::StrCat(attempt)},
          {kTimestampHeader, absl::StrCat(timestamp)},
          {kSignatureHeader, SignatureHeaderValue(secrets, timestamp, body)}};
}

}  // namespace keel::push
