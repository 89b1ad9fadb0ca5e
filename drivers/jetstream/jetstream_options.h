// JetStreamOptions: the jetstream driver's options, parsed from its Config
// in one place (JetStreamOptionsFromConfig) so that the factory's list of
// options and their parsing stay together.
//
//   servers=nats://h1:4222,nats://h2:4222   NATS URLs (default nats://127.0.0.1:4222)
//   credentials=FILE  token=TOKEN  tls_ca=FILE   authentication and TLS
//   bus=NAME          the bus: its subjects keel.NAME.* (default "default")
//   stream=NAME       a JetStream stream shared by several buses (default:
//                     KEEL_<bus>, the bus's own)
//   replicas=N        replicas of a JetStream stream the driver creates (1)
//   max_bytes=N       its byte budget; 0 = none (a full stream refuses
//                     publishes until trimmed)
//   duplicate_window=DURATION  its duplicate window (2m), which bounds how
//                     long a publish may wait between its check and its store
//   request_timeout=DURATION   one JetStream request (5s)
//   publish_timeout=DURATION   retrying a publish no server may have received (20s)
//   resolve_timeout=DURATION   retrying one a server may have received, to
//                     learn whether it was stored (1m; shorter than
//                     duplicate_window)
//   connect_timeout=DURATION   connecting (5s)
//   max_events_per_stream=N    trim every stream to its newest N events on
//                     append (0 = no such bound; declared retention applies
//                     through Trim either way)
//
// Thread safety: value types and a pure function.
#ifndef KEEL_DRIVERS_JETSTREAM_JETSTREAM_OPTIONS_H_
#define KEEL_DRIVERS_JETSTREAM_JETSTREAM_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/core/config.h"
#include "keel/core/option_spec.h"
#include "keel/drivers/jetstream/claim.h"
#include "keel/drivers/jetstream/nats_client.h"

namespace keel::jetstream {

struct JetStreamOptions {
  NatsClientOptions connection;
  std::string bus = "default";
  std::string shared_stream;  // Empty: KEEL_<bus>.
  int64_t replicas = 1;
  uint64_t max_bytes = 0;
  absl::Duration duplicate_window = absl::Minutes(2);
  absl::Duration request_timeout = absl::Seconds(5);
  absl::Duration publish_timeout = absl::Seconds(20);
  absl::Duration resolve_timeout = absl::Minutes(1);
  uint64_t max_events_per_stream = 0;
};

// The options JetStreamOptionsFromConfig reads, for the factory to declare.
std::vector<OptionSpec> JetStreamOptionSpecs();

// How long claims are pursued (drivers/jetstream/claim.h).
ClaimTimeouts ClaimTimeoutsOf(const JetStreamOptions& options);

// kInvalidArgument naming the option that does not parse.
absl::StatusOr<JetStreamOptions> JetStreamOptionsFromConfig(const Config& config);

}  // namespace keel::jetstream

#endif  // KEEL_DRIVERS_JETSTREAM_JETSTREAM_OPTIONS_H_
