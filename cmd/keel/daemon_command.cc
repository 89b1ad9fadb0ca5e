// `keel daemon`: serves the HTTP API v1 and SSE over one bus until SIGINT or
// SIGTERM, then shuts down in order: stop accepting, finish in-flight
// requests, close the bus (SSE streams end after their queued events, the
// store is flushed and closed), stop. Exit 0 after a clean shutdown. SIGHUP
// re-reads the tokens file, the JWT keys and the TLS certificate;
// connections stay open. Between signals, the signal thread gives freed
// memory back to the system (memory_release.h).
#include <spdlog/spdlog.h>

#include <boost/asio/ip/address.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <cerrno>
#include <csignal>
#include <fstream>
#include <ostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/command.h"
#include "keel/cmd/keel/daemon_tls.h"
#include "keel/cmd/keel/memory_release.h"
#include "keel/cmd/keel/server/api.h"
#include "keel/cmd/keel/server/authenticator.h"
#include "keel/cmd/keel/server/metrics.h"
#include "keel/cmd/keel/export/export_service.h"
#include "keel/cmd/keel/export/export_spec.h"
#include "keel/cmd/keel/server/push/push_service.h"
#include "keel/cmd/keel/server/push/subscription_file.h"
#include "keel/cmd/keel/server/server.h"
#include "keel/core/driver_factory.h"
#include "keel/core/status_macros.h"
#include "keel/core/stream_policy.h"
#include "keel/drivers/builtin_drivers.h"

namespace keel::cli {
namespace {

absl::StatusOr<std::pair<std::string, uint16_t>> ParseListen(const std::string& listen) {
  size_t colon = listen.rfind(':');
  uint32_t port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(listen.substr(colon + 1), &port) ||
      port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("--listen wants HOST:PORT, got '", listen, "'"));
  }
  std::string host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return std::make_pair(host, static_cast<uint16_t>(port));
}

// Publishes run on the I/O thread that read them unless the driver says a
// publish may wait (an fsync, say): then on the blocking pool, so that a
// slow disk does not stall the connections that thread serves.
bool InlinePublishes(const DriverTraits& traits) { return !traits.publishes_may_block; }

// Whether `host` reaches only this machine: a loopback address or
// `localhost`.
bool IsLoopback(const std::string& host) {
  boost::system::error_code error;
  const boost::asio::ip::address address = boost::asio::ip::make_address(host, error);
  if (error) return host == "localhost";
  return address.is_loopback() ||
         (address.is_v6() && address.to_v6().is_v4_mapped() &&
          boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, address.to_v6())
              .is_loopback());
}

// The credentials requests must carry (`--auth-tokens`, `--jwt-*`), or
// null for none — which only a loopback address, or `--insecure-no-auth`,
// allows.
absl::StatusOr<std::shared_ptr<server::Authenticator>> AuthenticatorFrom(
    const po::variables_map& vars, const std::string& host) {
  server::AuthOptions auth;
  auth.tokens_file = vars["auth-tokens"].as<std::string>();
  auth.jwt.hs256_secret_file = vars["jwt-hs256-secret-file"].as<std::string>();
  auth.jwt.public_key_file = vars["jwt-public-key"].as<std::string>();
  auth.jwt.jwks_file = vars["jwt-jwks"].as<std::string>();
  auth.jwt.audience = vars["jwt-audience"].as<std::string>();
  auth.jwt.issuer = vars["jwt-issuer"].as<std::string>();
  Config leeway{{"jwt-leeway", vars["jwt-leeway"].as<std::string>()}};
  KEEL_ASSIGN_OR_RETURN(auth.jwt.leeway, leeway.GetDuration("jwt-leeway", auth.jwt.leeway));
  if (!auth.jwt.configured() && (!auth.jwt.audience.empty() || !auth.jwt.issuer.empty())) {
    return absl::InvalidArgumentError(
        "--jwt-audience and --jwt-issuer need a key: --jwt-hs256-secret-file, --jwt-public-key "
        "or --jwt-jwks");
  }
  if (!auth.configured()) {
    if (!IsLoopback(host) && !vars["insecure-no-auth"].as<bool>()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "refusing to listen on ", host,
          " without authentication: anyone who reaches it could read and write every stream. "
          "Give --auth-tokens or a --jwt-* key, listen on a loopback address, or pass "
          "--insecure-no-auth"));
    }
    return nullptr;
  }
  KEEL_ASSIGN_OR_RETURN(std::unique_ptr<server::Authenticator> authenticator,
                        server::Authenticator::Load(std::move(auth)));
  return std::shared_ptr<server::Authenticator>(std::move(authenticator));
}

absl::StatusOr<server::ServerOptions> ServerOptionsFrom(const po::variables_map& vars,
                                                        const DriverTraits& traits) {
  server::ServerOptions options;
  options.inline_publishes = InlinePublishes(traits);
  KEEL_ASSIGN_OR_RETURN(auto listen, ParseListen(vars["listen"].as<std::string>()));
  options.host = listen.first;
  options.port = listen.second;
  options.io_threads = vars["io-threads"].as<int>();
  options.sse_threads = vars["sse-threads"].as<int>();
  options.blocking_threads = vars["blocking-threads"].as<int>();
  options.body_limit = vars["body-limit"].as<size_t>();
  options.cors_origin = vars["cors-origin"].as<std::string>();
  options.rate_limit = vars["rate-limit"].as<double>();
  options.rate_burst = vars["rate-burst"].as<double>();
  options.token_limits.publish_rate = vars["publish-rate-per-token"].as<double>();
  options.token_limits.publish_burst = vars["publish-burst-per-token"].as<double>();
  options.token_limits.sse_streams = vars["max-sse-per-token"].as<size_t>();
  options.token_limits.sse_streams_total = vars["max-sse-connections"].as<size_t>();
  Config durations;
  durations.Set("sse-keepalive", vars["sse-keepalive"].as<std::string>());
  durations.Set("idle-timeout", vars["idle-timeout"].as<std::string>());
  durations.Set("sse-flush", vars["sse-flush"].as<std::string>());
  KEEL_ASSIGN_OR_RETURN(options.sse_keepalive,
                        durations.GetDuration("sse-keepalive", options.sse_keepalive));
  KEEL_ASSIGN_OR_RETURN(options.sse_flush, durations.GetDuration("sse-flush", options.sse_flush));
  KEEL_ASSIGN_OR_RETURN(options.idle_timeout,
                        durations.GetDuration("idle-timeout", options.idle_timeout));
  durations.Set("trim-interval", vars["trim-interval"].as<std::string>());
  KEEL_ASSIGN_OR_RETURN(options.trim_interval,
                        durations.GetDuration("trim-interval", options.trim_interval));
  KEEL_ASSIGN_OR_RETURN(options.authenticator, AuthenticatorFrom(vars, options.host));
  KEEL_ASSIGN_OR_RETURN(options.tls, ServerTlsFrom(vars));
  KEEL_RETURN_IF_ERROR(server::ValidateServerOptions(options));  // A usage error, before start.
  return options;
}

absl::StatusOr<std::vector<StreamDeclaration>> DeclarationsFrom(const po::variables_map& vars) {
  std::vector<StreamDeclaration> declarations;
  if (!vars.count("declare")) return declarations;
  for (const std::string& text : vars["declare"].as<std::vector<std::string>>()) {
    absl::StatusOr<StreamDeclaration> declaration = StreamDeclaration::Parse(text);
    if (!declaration.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--declare '", text, "': ", declaration.status().message()));
    }
    declarations.push_back(*std::move(declaration));
  }
  return declarations;
}

// The lakehouse exports of --export; none without it.
absl::StatusOr<std::vector<lakehouse::ExportSpec>> ExportsFrom(const po::variables_map& vars) {
  std::vector<lakehouse::ExportSpec> specs;
  if (!vars.count("export")) return specs;
  for (const std::string& text : vars["export"].as<std::vector<std::string>>()) {
    KEEL_ASSIGN_OR_RETURN(lakehouse::ExportSpec spec, lakehouse::ParseExportSpec(text));
    specs.push_back(std::move(spec));
  }
  return specs;
}

absl::StatusOr<lakehouse::ExportServiceOptions> ExportOptionsFrom(const po::variables_map& vars) {
  lakehouse::ExportServiceOptions options;
  Config durations{{"interval", vars["export-interval"].as<std::string>()},
                   {"flush-after", vars["export-flush-after"].as<std::string>()}};
  KEEL_ASSIGN_OR_RETURN(options.interval, durations.GetDuration("interval", options.interval));
  KEEL_ASSIGN_OR_RETURN(options.files.flush_after,
                        durations.GetDuration("flush-after", options.files.flush_after));
  options.files.max_file_events = std::max<size_t>(1, vars["export-file-events"].as<size_t>());
  return options;
}

// The push subscriptions of --subscriptions; none without it.
absl::StatusOr<std::vector<push::PushSubscription>> SubscriptionsFrom(
    const po::variables_map& vars) {
  const std::string path = vars["subscriptions"].as<std::string>();
  if (path.empty()) return std::vector<push::PushSubscription>{};
  return push::ReadSubscriptionFile(path);
}

// Applies the configured declarations; a drift names the stream and fields.
absl::Status Declare(EventBus& bus, const std::vector<StreamDeclaration>& declarations) {
  for (const StreamDeclaration& declaration : declarations) {
    KEEL_RETURN_IF_ERROR(bus.Declare(declaration.stream, declaration.policy));
  }
  return absl::OkStatus();
}

// spdlog reads a name it does not know as "off": a typo would silence the
// daemon's log.
absl::StatusOr<spdlog::level::level_enum> LogLevel(const std::string& name) {
  const spdlog::level::level_enum level = spdlog::level::from_str(name);
  if (level == spdlog::level::off && name != "off") {
    return absl::InvalidArgumentError(
        absl::StrCat("--log-level wants debug, info, warn, error or off, got '", name, "'"));
  }
  return level;
}

// Blocks SIGINT/SIGTERM and SIGHUP (threads started later inherit the mask)
// and returns the set to wait on.
sigset_t BlockDaemonSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

class DaemonCommand : public Command {
 public:
  absl::string_view name() const override { return "daemon"; }
  absl::string_view summary() const override {
    return "serve streams over HTTP (publish, replay, SSE with Last-Event-ID resume, metrics)";
  }
  void AddOptions(po::options_description& options) const override {
    options.add_options()("listen", po::value<std::string>()->default_value("127.0.0.1:8080"),
                          "HOST:PORT to listen on (port 0 picks a free one; see --port-file)")(
        "io-threads", po::value<int>()->default_value(2), "threads serving requests and responses")(
        "sse-threads", po::value<int>()->default_value(server::DefaultSseThreads()),
        "threads serving SSE connections (default: half the CPUs, at least 1)")(
        "blocking-threads", po::value<int>()->default_value(64),
        "threads running publishes and store reads (bounds concurrent group-commit members)")(
        "body-limit", po::value<size_t>()->default_value(1 << 20), "max request body bytes")(
        "idle-timeout", po::value<std::string>()->default_value("60s"),
        "close keep-alive connections idle this long")(
        "sse-keepalive", po::value<std::string>()->default_value("15s"),
        "interval of `: keepalive` comments on idle SSE streams")(
        "sse-flush", po::value<std::string>()->default_value("100ms"),
        "least time between two writes of live events to one SSE connection "
        "(events arriving in between leave in one write; 0 = write as they come)")(
        "cors-origin", po::value<std::string>()->default_value("*"),
        "Access-Control-Allow-Origin value (empty for none)")(
        "auth-tokens", po::value<std::string>()->default_value(""),
        "file of bearer tokens, one 'sha256:<hex> <scope>... [tenant=T]' per line (`keel token "
        "hash` prints one): requests must then carry a token (Authorization: Bearer, or "
        "?access_token= opening an SSE stream); re-read on SIGHUP; empty = none")(
        "jwt-hs256-secret-file", po::value<std::string>()->default_value(""),
        "accept JWTs signed HS256 with the secret in this file (at least 32 bytes)")(
        "jwt-public-key", po::value<std::string>()->default_value(""),
        "accept JWTs signed by this PEM public key: RSA (RS256) or EC P-256 (ES256)")(
        "jwt-jwks", po::value<std::string>()->default_value(""),
        "accept JWTs signed by a key of this JWKS file (RSA, EC P-256, oct)")(
        "jwt-audience", po::value<std::string>()->default_value(""),
        "the 'aud' a JWT must name (required with a JWT key)")(
        "jwt-issuer", po::value<std::string>()->default_value(""),
        "the 'iss' a JWT must carry (empty: any)")(
        "jwt-leeway", po::value<std::string>()->default_value("30s"),
        "clock difference forgiven when checking a JWT's exp and nbf")(
        "insecure-no-auth", po::bool_switch()->default_value(false),
        "serve without credentials on a non-loopback --listen address")(
        "rate-limit", po::value<double>()->default_value(0),
        "requests per second each client address may send on average (0 = no limit); "
        "over it: 429 with Retry-After")(
        "rate-burst", po::value<double>()->default_value(0),
        "requests a client may send at once before --rate-limit applies (0 = one second's worth)")(
        "publish-rate-per-token", po::value<double>()->default_value(0),
        "publish requests per second one token may send on average (a client address without "
        "credentials); 0 = no limit; over it: 429 with Retry-After")(
        "publish-burst-per-token", po::value<double>()->default_value(0),
        "publish requests a token may send at once (0 = one second's worth)")(
        "max-sse-per-token", po::value<size_t>()->default_value(0),
        "SSE streams one token (a client address without credentials) may hold open; 0 = no "
        "limit; over it: 429 with Retry-After")(
        "max-sse-connections", po::value<size_t>()->default_value(0),
        "SSE streams the daemon holds open in all; 0 = no limit; over it: 503 with Retry-After")(
        "shutdown-timeout", po::value<std::string>()->default_value("10s"),
        "how long shutdown waits for in-flight requests and SSE streams")(
        "port-file", po::value<std::string>()->default_value(""),
        "write the bound port to this file once listening")(
        "declare", po::value<std::vector<std::string>>()->composing(),
        "declare a stream or topic: 'NAME key=value ...' (keys: max_age, max_bytes, "
        "max_events, max_payload_bytes, dedupe_window, dead_letter.max_age, "
        "dead_letter.max_bytes, dead_letter.max_events, hot.max_age, hot.max_bytes, "
        "hot.max_events, partitions); repeatable; a "
        "declaration that differs from the stored one stops the daemon (resource drift)")(
        "default-policy", po::value<std::string>()->default_value(""),
        "policy of undeclared streams, as 'key=value ...' (default: unbounded retention, "
        "128KiB payloads, 2m dedupe window)")(
        "trim-interval", po::value<std::string>()->default_value("1s"),
        "how often the retention trimmer looks for streams over a bound")(
        "subscriptions", po::value<std::string>()->default_value(""),
        "a JSON file of push subscriptions (one declaration or an array, as POST "
        "/v1/subscriptions takes them) declared at start; one that differs from the stored one "
        "stops the daemon (resource drift); the file's secrets replace the stored ones")(
        "export", po::value<std::vector<std::string>>()->composing(),
        "export streams as JSON-lines files by day, continuously and once each: 'PATTERN "
        "DIR' or 'PATTERN s3://BUCKET/PREFIX endpoint=URL', then settings name=NAME, "
        "compression=zstd and the s3 cold store's options (PATTERN: a stream, a prefix "
        "'orders.*' or a glob); repeatable")(
        "export-interval", po::value<std::string>()->default_value("1s"),
        "how often each export looks for new events")(
        "export-flush-after", po::value<std::string>()->default_value("60s"),
        "an export writes a file that ends at a stream's head once its first event is this "
        "old (a full file, or one a new day ends, at once)")(
        "export-file-events", po::value<size_t>()->default_value(100'000),
        "events per export file at most")(
        "push-ca-file", po::value<std::string>()->default_value(""),
        "CA certificates (PEM) that https push-subscription endpoints must chain to "
        "(empty: the system's)")("log-level", po::value<std::string>()->default_value("info"),
                                 "debug, info, warn, error or off");
    AddTlsOptions(options);
    // Last: a driver's flag never shadows one of the daemon's own.
    AddDriverOptions(options, DefaultDriverName(), /*flag_defaults=*/true);
  }

  int Run(const po::variables_map& vars, CommandIo& io) const override {
    absl::StatusOr<spdlog::level::level_enum> level = LogLevel(vars["log-level"].as<std::string>());
    if (!level.ok()) return UsageError(io, "keel daemon", level.status().message());
    spdlog::set_level(*level);
    absl::StatusOr<DriverSelection> driver = SelectDriver(vars);
    if (!driver.ok()) return DriverSelectionError(io, "keel daemon", driver.status());
    absl::StatusOr<server::ServerOptions> options = ServerOptionsFrom(vars, driver->traits);
    Config timeouts{{"t", vars["shutdown-timeout"].as<std::string>()}};
    absl::StatusOr<absl::Duration> grace = timeouts.GetDuration("t", absl::Seconds(10));
    absl::StatusOr<std::vector<StreamDeclaration>> declarations = DeclarationsFrom(vars);
    absl::StatusOr<StreamPolicy> default_policy =
        StreamPolicy::Parse(vars["default-policy"].as<std::string>());
    absl::StatusOr<std::vector<push::PushSubscription>> subscriptions = SubscriptionsFrom(vars);
    absl::StatusOr<std::vector<lakehouse::ExportSpec>> exports = ExportsFrom(vars);
    absl::StatusOr<lakehouse::ExportServiceOptions> export_options = ExportOptionsFrom(vars);
    for (const absl::Status& status :
         {options.status(), grace.status(), declarations.status(), default_policy.status(),
          subscriptions.status(), exports.status(), export_options.status()}) {
      if (!status.ok()) return UsageError(io, "keel daemon", status.message());
    }
    const sigset_t signals = BlockDaemonSignals();
    server::Metrics metrics;
    DriverContext context;
    context.default_policy = *default_policy;
    context.on_store_write = [&metrics](absl::Duration d) { metrics.store_write_latency().Observe(d); };
    absl::StatusOr<std::unique_ptr<EventBus>> bus =
        CreateBus(driver->name, driver->config, context);
    if (!bus.ok()) {
      io.err << "keel daemon: cannot open driver '" << driver->name
             << "': " << bus.status().message() << "\n";
      return kExitFailure;
    }
    if (absl::Status declared = Declare(**bus, *declarations); !declared.ok()) {
      io.err << "keel daemon: " << declared.message() << "\n";
      (*bus)->Close().IgnoreError();
      return kExitFailure;
    }
    AnnounceAuth(options->authenticator.get(), io, *context.logger);
    server::Api api(**bus, metrics);
    push::PushServiceOptions push_options;
    push_options.worker.ca_file = vars["push-ca-file"].as<std::string>();
    push::PushService push(**bus, push_options, *context.logger);
    if (absl::Status started = push.Start(); !started.ok()) {
      io.err << "keel daemon: push subscriptions: " << started.message() << "\n";
      (*bus)->Close().IgnoreError();
      return kExitFailure;
    }
    api.set_push(&push);
    lakehouse::ExportService exporter(**bus, *std::move(exports), *export_options,
                                      *context.logger);
    if (absl::Status started = exporter.Start(); !started.ok()) {
      io.err << "keel daemon: " << started.message() << "\n";
      push.Stop();
      (*bus)->Close().IgnoreError();
      return kExitFailure;
    }
    api.add_metrics([&exporter] { return exporter.MetricsText(); });
    server::Server server(*options, api, context.logger);
    if (absl::Status started = server.Start(); !started.ok()) {
      io.err << "keel daemon: " << started.message() << "\n";
      exporter.Stop();
      push.Stop();
      (*bus)->Close().IgnoreError();
      return kExitFailure;
    }
    push.SetSelfAddress(options->host, server.port());
    // After the listener is up, so that an endpoint on this daemon is refused.
    if (absl::Status declared = push::DeclareSubscriptions(push, *subscriptions); !declared.ok()) {
      io.err << "keel daemon: --subscriptions: " << declared.message() << "\n";
      Shutdown(server, api, push, exporter, **bus, *grace, io);
      return kExitFailure;
    }
    Announce(vars, *driver, server.port(), options->tls != nullptr, **bus, io);
    int signal = 0;
    while ((signal = AwaitSignal(signals)) == SIGHUP) {
      Reload(options->authenticator.get(), *context.logger);
      ReloadTls(options->tls.get(), *context.logger);
    }
    context.logger->Info(absl::StrCat("keel daemon: signal ", signal, ", shutting down"));
    return Shutdown(server, api, push, exporter, **bus, *grace, io);
  }

 private:
  // Says how requests are authenticated: none (a loopback address, or
  // --insecure-no-auth), and the tokens file's lines holding a token in
  // clear text.
  static void AnnounceAuth(const server::Authenticator* authenticator, CommandIo& io,
                           Logger& logger) {
    if (authenticator == nullptr) {
      io.out << "keel daemon: no authentication: every client that reaches the address may "
                "read and write every stream"
             << std::endl;
      return;
    }
    WarnOfClearTokens(*authenticator, logger);
  }

  static void WarnOfClearTokens(const server::Authenticator& authenticator, Logger& logger) {
    for (int line : authenticator.LegacyLines()) {
      logger.Warn(absl::StrCat("keel daemon: --auth-tokens line ", line,
                               " holds a token in clear text; replace it with the line `keel "
                               "token hash` prints"));
    }
  }

  // SIGHUP: re-reads the credentials, keeping the old ones on an error.
  static void Reload(server::Authenticator* authenticator, Logger& logger) {
    if (authenticator == nullptr) {
      logger.Info("keel daemon: SIGHUP: no credentials configured, nothing to re-read");
      return;
    }
    absl::Status reloaded = authenticator->Reload();
    if (!reloaded.ok()) {
      logger.Error(absl::StrCat("keel daemon: SIGHUP: credentials not re-read, keeping the "
                                "previous ones: ", reloaded.message()));
      return;
    }
    logger.Info("keel daemon: SIGHUP: credentials re-read");
    WarnOfClearTokens(*authenticator, logger);
  }

  // "keel daemon listening on HOST:PORT (driver NAME: key=value ...)", the
  // options as the driver got them.
  static void Announce(const po::variables_map& vars, const DriverSelection& driver,
                       uint16_t port, bool tls, EventBus& bus, CommandIo& io) {
    const std::string port_file = vars["port-file"].as<std::string>();
    if (!port_file.empty()) std::ofstream(port_file) << port << "\n";
    const std::string& listen = vars["listen"].as<std::string>();
    io.out << "keel daemon listening on " << (tls ? "https://" : "")
           << listen.substr(0, listen.rfind(':')) << ":" << port
           << " (driver " << driver.name;
    const char* separator = ": ";
    for (const auto& [key, value] : driver.config.values()) {
      io.out << separator << key << "=" << value;
      separator = " ";
    }
    io.out << ")" << std::endl;
    if (!bus.DegradedReason().empty()) io.out << "DEGRADED: " << bus.DegradedReason() << std::endl;
  }

  // The next of `signals`; meanwhile, every kMemoryReleaseInterval, gives
  // freed memory back to the system (memory_release.h).
  static int AwaitSignal(const sigset_t& signals) {
    const timespec interval = absl::ToTimespec(kMemoryReleaseInterval);
    while (true) {
      const int signal = sigtimedwait(&signals, nullptr, &interval);
      if (signal > 0) return signal;
      if (errno == EAGAIN) ReleaseFreeMemory();
    }
  }

  static int Shutdown(server::Server& server, server::Api& api, push::PushService& push,
                      lakehouse::ExportService& exporter, EventBus& bus, absl::Duration grace,
                      CommandIo& io) {
    api.SetDraining();
    server.StopAccepting();
    bool drained = server.DrainRequests(grace);
    exporter.Stop();  // Between two files: the next start goes on after the last linked.
    push.Stop();  // Before the bus closes: a batch in flight is committed or left for next time.
    absl::Status closed = bus.Close(grace);
    server.Stop(grace);
    if (!drained || !closed.ok()) {
      io.err << "keel daemon: unclean shutdown: "
             << (drained ? std::string(closed.message()) : "requests still in flight") << "\n";
      return kExitFailure;
    }
    io.out << "keel daemon stopped" << std::endl;
    return kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> NewDaemonCommand() { return std::make_unique<DaemonCommand>(); }

}  // namespace keel::cli
