#include "keel/tests/jetstream/jetstream_test_util.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "keel/core/driver_factory.h"
#include "keel/core/status_macros.h"
#include "keel/drivers/builtin_drivers.h"
#include "keel/drivers/jetstream/nats_client.h"
#include "keel/tests/jetstream/jetstream_environment.h"

namespace keel::jetstream::testing {

absl::StatusOr<std::unique_ptr<EventBus>> OpenDaemon(Config config, Clock* clock) {
  LinkBuiltinDrivers();
  if (!config.Has("servers")) config.Set("servers", SharedCluster()->servers());
  DriverContext context;
  if (clock != nullptr) context.clock = clock;
  return CreateBus("jetstream", config, context);
}

Event Payload(absl::string_view stream, absl::string_view payload) {
  Event event;
  event.stream = std::string(stream);
  event.type = "test.event";
  event.payload = std::string(payload);
  return event;
}

absl::StatusOr<std::vector<Event>> ReadAll(EventBus& bus, absl::string_view stream) {
  std::vector<Event> events;
  ReplayRequest request;
  request.stream = std::string(stream);
  request.after = Position::Earliest();
  request.limit = kMaxReplayLimit;
  while (true) {
    KEEL_ASSIGN_OR_RETURN(ReplayPage page, bus.replayer()->Replay(request));
    for (Event& event : page.events) events.push_back(std::move(event));
    if (page.reached_end) return events;
    request.after = Position::After(page.next);
  }
}

absl::StatusOr<std::string> ApiRequest(const std::string& servers, const std::string& subject,
                                       const std::string& body) {
  NatsClientOptions options;
  for (absl::string_view url : absl::StrSplit(servers, ',')) options.servers.emplace_back(url);
  KEEL_ASSIGN_OR_RETURN(std::unique_ptr<NatsClient> client, NatsClient::Connect(options));
  NatsReply reply = client->Request(subject, {}, body, absl::Seconds(10));
  if (reply.kind != NatsReply::Kind::kReplied) {
    return absl::UnavailableError(absl::StrCat(subject, ": ", reply.problem));
  }
  return reply.data;
}

}  // namespace keel::jetstream::testing
