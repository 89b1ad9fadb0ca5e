#include "cmd/keel/command.h"

#include <boost/program_options/value_semantic.hpp>

#include "cmd/keel/client/http_client.h"
#include "core/status_macros.h"

namespace keel::cli {

std::vector<std::unique_ptr<Command>> BuiltinCommands() {
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(NewDaemonCommand());
  commands.push_back(NewDeadLettersCommand());
  commands.push_back(NewDeclareCommand());
  commands.push_back(NewDriversCommand());
  commands.push_back(NewGroupCommand());
  commands.push_back(NewPublishCommand());
  commands.push_back(NewReplayCommand());
  commands.push_back(NewSelftestCommand());
  commands.push_back(NewStreamsCommand());
  commands.push_back(NewTailCommand());
  commands.push_back(NewVersionCommand());
  return commands;
}

void AddDriverOptions(po::options_description& options, absl::string_view default_driver) {
  options.add_options()
      ("driver", po::value<std::string>()->default_value(std::string(default_driver)),
       "event-bus driver, by registered name (see `keel drivers`)")
      ("driver-option", po::value<std::vector<std::string>>()->composing(),
       "driver option as key=value; repeatable (e.g. max_events_per_stream=1000)");
}

absl::StatusOr<Config> DriverConfigFrom(const po::variables_map& vars) {
  Config config;
  if (vars.count("driver-option")) {
    for (const std::string& assignment : vars["driver-option"].as<std::vector<std::string>>()) {
      KEEL_RETURN_IF_ERROR(config.SetFromAssignment(assignment));
    }
  }
  return config;
}

int UsageError(CommandIo& io, absl::string_view command, absl::string_view message) {
  io.err << command << ": " << message << "\n";
  return kExitUsage;
}

std::string ActionIn(const po::variables_map& vars,
                     std::initializer_list<absl::string_view> actions) {
  if (!vars.count("action")) return "";
  const std::string action = vars["action"].as<std::string>();
  for (absl::string_view allowed : actions) {
    if (action == allowed) return action;
  }
  return "";
}

void AddServerOption(po::options_description& options) {
  options.add_options()("server", po::value<std::string>()->default_value("127.0.0.1:8080"),
                        "daemon address, HOST:PORT")(
      "auth-token", po::value<std::string>()->default_value(""),
      "bearer token for a daemon started with --auth-tokens (best kept in a --config file: "
      "a flag shows in the process list)");
}

client::ClientOptions ClientOptionsFrom(const po::variables_map& vars) {
  client::ClientOptions options;
  options.token = vars["auth-token"].as<std::string>();
  return options;
}

}  // namespace keel::cli
