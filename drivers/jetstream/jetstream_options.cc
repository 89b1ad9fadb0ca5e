#include "keel/drivers/jetstream/jetstream_options.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::jetstream {

ClaimTimeouts ClaimTimeoutsOf(const JetStreamOptions& options) {
  return ClaimTimeouts{options.publish_timeout, options.resolve_timeout};
}

std::vector<OptionSpec> JetStreamOptionSpecs() {
  const JetStreamOptions defaults;
  return {
      StringOption("servers", "nats://127.0.0.1:4222",
                   "NATS server URLs, comma-separated (list every server of a cluster)"),
      StringOption("credentials", "none", "a NATS .creds file (user JWT and seed)"),
      StringOption("token", "none", "a NATS authentication token"),
      StringOption("tls_ca", "none", "CA certificate file that verifies the servers' TLS"),
      DurationOption("connect_timeout", defaults.connection.connect_timeout,
                     "connecting to the servers"),
      StringOption("bus", defaults.bus, "the bus: its subjects are keel.<bus>.*"),
      StringOption("stream", "KEEL_<bus>", "a JetStream stream shared by several buses"),
      UintOption("replicas", static_cast<uint64_t>(defaults.replicas),
                 "replicas of a JetStream stream the driver creates (1 to 5)"),
      UintOption("max_bytes", defaults.max_bytes,
                 "that stream's byte budget; 0 = none (a full stream refuses publishes)"),
      DurationOption("duplicate_window", defaults.duplicate_window,
                     "that stream's duplicate window, which bounds how long a publish may be "
                     "retried"),
      DurationOption("request_timeout", defaults.request_timeout, "one JetStream request"),
      DurationOption("publish_timeout", defaults.publish_timeout,
                     "retrying a publish that no server may have received"),
      DurationOption("resolve_timeout", defaults.resolve_timeout,
                     "retrying a publish that a server may have received, to learn whether it "
                     "was stored, before answering that the outcome is unknown (shorter than "
                     "duplicate_window)"),
      UintOption("max_events_per_stream", defaults.max_events_per_stream,
                 "trim every stream to its newest N events on append (0 = no such bound)"),
  };
}

absl::StatusOr<JetStreamOptions> JetStreamOptionsFromConfig(const Config& config) {
  JetStreamOptions options;
  for (absl::string_view url : absl::StrSplit(config.GetString("servers", "nats://127.0.0.1:4222"),
                                              ',', absl::SkipWhitespace())) {
    options.connection.servers.emplace_back(absl::StripAsciiWhitespace(url));
  }
  if (options.connection.servers.empty()) {
    return InvalidArgument("option 'servers': no URL given");
  }
  options.connection.credentials_file = config.GetString("credentials", "");
  options.connection.token = config.GetString("token", "");
  options.connection.tls_ca_file = config.GetString("tls_ca", "");
  KEEL_ASSIGN_OR_RETURN(options.connection.connect_timeout,
                        config.GetDuration("connect_timeout", options.connection.connect_timeout));
  options.bus = config.GetString("bus", options.bus);
  options.shared_stream = config.GetString("stream", "");
  KEEL_ASSIGN_OR_RETURN(uint64_t replicas, config.GetUint("replicas", 1, 1, 5));
  options.replicas = static_cast<int64_t>(replicas);
  KEEL_ASSIGN_OR_RETURN(options.max_bytes, config.GetUint("max_bytes", 0, 0, INT64_MAX));
  KEEL_ASSIGN_OR_RETURN(options.duplicate_window,
                        config.GetDuration("duplicate_window", options.duplicate_window));
  if (options.duplicate_window < absl::Milliseconds(100)) {
    return InvalidArgument("option 'duplicate_window': JetStream needs at least 100ms");
  }
  KEEL_ASSIGN_OR_RETURN(options.request_timeout,
                        config.GetDuration("request_timeout", options.request_timeout));
  KEEL_ASSIGN_OR_RETURN(options.publish_timeout,
                        config.GetDuration("publish_timeout", options.publish_timeout));
  if (options.request_timeout <= absl::ZeroDuration() ||
      options.publish_timeout < options.request_timeout) {
    return InvalidArgument(
        "options 'request_timeout' and 'publish_timeout': the request timeout must be positive "
        "and the publish timeout at least as long");
  }
  KEEL_ASSIGN_OR_RETURN(options.resolve_timeout,
                        config.GetDuration("resolve_timeout", options.resolve_timeout));
  if (options.publish_timeout >= options.duplicate_window) {
    return InvalidArgument(
        absl::StrCat("option 'publish_timeout' (", absl::FormatDuration(options.publish_timeout),
                     ") must be shorter than 'duplicate_window' (",
                     absl::FormatDuration(options.duplicate_window),
                     "): a publish is retried only while JetStream still recognises its slot"));
  }
  if (!config.Has("resolve_timeout")) {
    // The default, within what the other options allow.
    options.resolve_timeout = std::max(
        options.publish_timeout, std::min(options.resolve_timeout, options.duplicate_window / 2));
  }
  if (options.resolve_timeout < options.publish_timeout) {
    return InvalidArgument("option 'resolve_timeout' must be at least 'publish_timeout'");
  }
  if (options.resolve_timeout >= options.duplicate_window) {
    return InvalidArgument(
        absl::StrCat("option 'resolve_timeout' (", absl::FormatDuration(options.resolve_timeout),
                     ") must be shorter than 'duplicate_window' (",
                     absl::FormatDuration(options.duplicate_window),
                     "): a publish is retried only while JetStream still recognises its slot"));
  }
  KEEL_ASSIGN_OR_RETURN(options.max_events_per_stream, config.GetUint("max_events_per_stream", 0));
  return options;
}

}  // namespace keel::jetstream
