// `keel tail`: follows a stream of a running daemon over SSE and prints each
// event as a JSON line. On a disconnect (daemon restart, network) it
// reconnects with Last-Event-ID and continues exactly after the last event
// it printed. Retention gaps (`keel.gap`) and reconnects are reported on
// stderr.
//
//   keel tail --stream orders                  # new events from now on
//   keel tail --stream orders --after earliest --count 10
#include <ostream>

#include <boost/program_options/value_semantic.hpp>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/client/errors.h"
#include "keel/cmd/keel/client/follow.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/cmd/keel/command.h"

namespace keel::cli {
namespace {

class TailCommand : public Command {
 public:
  absl::string_view name() const override { return "tail"; }
  absl::string_view summary() const override {
    return "follow a stream of a running daemon over SSE (resumes after reconnects)";
  }
  void AddOptions(po::options_description& options) const override {
    AddServerOption(options);
    options.add_options()
        ("stream", po::value<std::string>(), "stream to follow (required)")
        ("after", po::value<std::string>()->default_value("latest"),
         "start after this position: earliest, latest or a cursor")
        ("after-time", po::value<std::string>(),
         "start at the first event published at or after this RFC 3339 time "
         "(instead of --after)")
        ("tenant", po::value<std::string>(), "only events of this tenant")
        ("type", po::value<std::string>(), "only events whose type starts with this")
        ("count", po::value<size_t>(), "exit after printing this many events")
        ("retries", po::value<int>()->default_value(10),
         "consecutive reconnect attempts before giving up");
  }

  int Run(const po::variables_map& vars, CommandIo& io) const override {
    absl::StatusOr<client::ServerAddress> server =
        client::ParseServerAddress(vars["server"].as<std::string>());
    if (!server.ok()) {
      return UsageError(io, "keel tail", server.status().message());
    }
    if (!vars.count("stream")) {
      return UsageError(io, "keel tail", "--stream is required");
    }
    const size_t count = vars.count("count") ? vars["count"].as<size_t>() : 0;
    if (vars.count("count") && count == 0) {
      return UsageError(io, "keel tail", "--count must be at least 1");
    }
    if (vars.count("after-time") && !vars["after"].defaulted()) {
      return UsageError(io, "keel tail", "give either --after or --after-time, not both");
    }
    client::FollowOptions options;
    options.stream = vars["stream"].as<std::string>();
    options.after = vars["after"].as<std::string>();
    if (vars.count("after-time")) options.after_time = vars["after-time"].as<std::string>();
    if (vars.count("tenant")) options.tenant = vars["tenant"].as<std::string>();
    if (vars.count("type")) options.type = vars["type"].as<std::string>();
    options.max_retries = vars["retries"].as<int>();
    const client::ClientOptions client = ClientOptionsFrom(vars);
    options.token = client.token;
    options.tls = client.tls;
    options.on_reconnect = [&io](const absl::Status& reason, absl::Duration wait, int attempt) {
      io.err << "keel tail: " << client::DescribeError(reason) << "; reconnecting in "
             << absl::FormatDuration(wait) << " (attempt " << attempt << ")" << std::endl;
    };
    size_t printed = 0;
    absl::Status status = client::FollowStream(
        server->host, server->port, options, [&](const client::SseFrame& frame) {
          if (frame.event == "keel.gap" || frame.event == "keel.error" ||
              frame.event == "keel.notice") {
            io.err << frame.event << ": " << frame.data << std::endl;
            return true;
          }
          io.out << frame.data << "\n";
          io.out.flush();
          ++printed;
          return count == 0 || printed < count;
        });
    if (!status.ok()) {
      io.err << "keel tail: " << client::DescribeError(status) << "\n";
      return kExitFailure;
    }
    return kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> NewTailCommand() { return std::make_unique<TailCommand>(); }

}  // namespace keel::cli
