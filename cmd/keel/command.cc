#include "keel/cmd/keel/command.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <iterator>

#include <boost/program_options/value_semantic.hpp>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::cli {

std::vector<std::unique_ptr<Command>> BuiltinCommands() {
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(NewCollectionCommand());
  commands.push_back(NewDaemonCommand());
  commands.push_back(NewDeadLettersCommand());
  commands.push_back(NewDeclareCommand());
  commands.push_back(NewDriversCommand());
  commands.push_back(NewExportCommand());
  commands.push_back(NewGroupCommand());
  commands.push_back(NewPublishCommand());
  commands.push_back(NewReplayCommand());
  commands.push_back(NewSelftestCommand());
  commands.push_back(NewStreamsCommand());
  commands.push_back(NewSubscriptionCommand());
  commands.push_back(NewTailCommand());
  commands.push_back(NewTokenCommand());
  commands.push_back(NewVersionCommand());
  return commands;
}

namespace {

// The value of a driver's flag: a string of a type of its own, so that
// SelectDriver tells the flags AddDriverOptions added from a command's own
// option of the same name (which AddDriverOptions left in place).
struct DriverFlagValue {
  std::string text;
};

// How Boost.Program_options reads a DriverFlagValue (found by argument-
// dependent lookup): the whole argument, spaces and all.
void validate(boost::any& out, const std::vector<std::string>& values, DriverFlagValue*, int) {
  po::validators::check_first_occurrence(out);
  out = DriverFlagValue{po::validators::get_single_string(values)};
}

// A flag one of the registered drivers declares, with the option it sets.
struct DriverFlag {
  std::string driver;
  OptionSpec spec;
};

// Every declared flag, once: the first declaration (by driver name, then
// declaration order) describes it.
std::vector<DriverFlag> RegisteredDriverFlags() {
  std::vector<DriverFlag> flags;
  for (const std::string& name : DriverRegistry().RegisteredNames()) {
    absl::StatusOr<std::shared_ptr<DriverFactory>> factory = DriverRegistry().Find(name);
    if (!factory.ok()) continue;  // Unregistered since.
    for (OptionSpec& spec : (*factory)->options()) {
      const bool known = std::any_of(flags.begin(), flags.end(), [&](const DriverFlag& flag) {
        return flag.spec.flag == spec.flag;
      });
      if (!spec.flag.empty() && !known) flags.push_back({name, std::move(spec)});
    }
  }
  return flags;
}

// The value of driver flag `flag` when the user gave it (on the command
// line or in the --config file); nullptr when not given, defaulted or a
// command's own option.
const std::string* GivenDriverFlag(const po::variables_map& vars, const std::string& flag) {
  if (!vars.count(flag) || vars[flag].defaulted()) return nullptr;
  const auto* value = boost::any_cast<DriverFlagValue>(&vars[flag].value());
  return value == nullptr ? nullptr : &value->text;
}

// True when driver flag `flag` was not given and the command gives it a
// default (AddDriverOptions with flag_defaults).
bool DefaultedDriverFlag(const po::variables_map& vars, const std::string& flag) {
  return vars.count(flag) && vars[flag].defaulted() &&
         boost::any_cast<DriverFlagValue>(&vars[flag].value()) != nullptr;
}

const OptionSpec* FindFlag(const std::vector<OptionSpec>& specs, absl::string_view flag) {
  for (const OptionSpec& spec : specs) {
    if (spec.flag == flag) return &spec;
  }
  return nullptr;
}

}  // namespace

void AddDriverOptions(po::options_description& options, absl::string_view default_driver,
                      bool flag_defaults) {
  po::options_description group("Driver options (`keel drivers` lists each driver's)");
  group.add_options()
      ("driver", po::value<std::string>()->default_value(std::string(default_driver)),
       "event-bus driver, by registered name (see `keel drivers`)")
      ("driver-option", po::value<std::vector<std::string>>()->composing(),
       "driver option as key=value; repeatable; an option the driver does not declare is "
       "refused (e.g. max_events_per_stream=1000)");
  for (const DriverFlag& flag : RegisteredDriverFlags()) {
    if (options.find_nothrow(flag.spec.flag, false) != nullptr) continue;
    auto* value = po::value<DriverFlagValue>();
    if (flag_defaults && !flag.spec.flag_default.empty()) {
      value->default_value(DriverFlagValue{flag.spec.flag_default}, flag.spec.flag_default);
    }
    const std::string help =
        absl::StrCat(flag.spec.help, " (option ", flag.spec.name, " of driver ", flag.driver, ")");
    group.add_options()(flag.spec.flag.c_str(), value, help.c_str());
  }
  options.add(group);
}

absl::StatusOr<DriverSelection> SelectDriver(const po::variables_map& vars) {
  DriverSelection selection;
  selection.name = vars["driver"].as<std::string>();
  KEEL_ASSIGN_OR_RETURN(selection.factory, DriverRegistry().Find(selection.name));
  const DriverFactory& factory = *selection.factory;
  Config& config = selection.config;
  if (vars.count("driver-option")) {
    for (const std::string& assignment : vars["driver-option"].as<std::vector<std::string>>()) {
      KEEL_RETURN_IF_ERROR(config.SetFromAssignment(assignment));
    }
  }
  const std::vector<OptionSpec> specs = factory.options();
  std::vector<const OptionSpec*> given_flags;
  for (const DriverFlag& flag : RegisteredDriverFlags()) {
    const std::string* given = GivenDriverFlag(vars, flag.spec.flag);
    if (given == nullptr) continue;
    const OptionSpec* spec = FindFlag(specs, flag.spec.flag);
    if (spec == nullptr) {
      return InvalidArgument(absl::StrCat("--", flag.spec.flag, " sets option ", flag.spec.name,
                                          " of driver '", flag.driver, "'; driver '",
                                          selection.name, "' takes: ", OptionNames(specs)));
    }
    given_flags.push_back(spec);
    if (!config.Has(spec->name)) config.Set(spec->name, *given);
  }
  // In declaration order, asking the driver each time: an option chosen
  // earlier decides whether a later one is taken at all (a store's path
  // only once a store that has one is chosen).
  for (const OptionSpec& spec : specs) {
    if (spec.flag_default.empty() || config.Has(spec.name) ||
        !DefaultedDriverFlag(vars, spec.flag)) {
      continue;
    }
    absl::StatusOr<std::vector<OptionSpec>> taken = factory.OptionsFor(config);
    if (taken.ok() && FindOption(*taken, spec.name) != nullptr) {
      config.Set(spec.name, spec.flag_default);
    }
  }
  // A flag the driver declares but does not take with these options (the
  // memory store has no path) is named as the user gave it.
  KEEL_ASSIGN_OR_RETURN(std::vector<OptionSpec> taken, factory.OptionsFor(config));
  for (const OptionSpec* spec : given_flags) {
    if (FindOption(taken, spec->name) != nullptr) continue;
    return InvalidArgument(absl::StrCat(
        "--", spec->flag, " sets option ", spec->name, ", which driver '", selection.name,
        "' does not take with these options; it takes: ", OptionNames(taken)));
  }
  KEEL_RETURN_IF_ERROR(ValidateDriverOptions(factory, config));
  selection.traits = factory.Traits(config);
  return selection;
}

int DriverSelectionError(CommandIo& io, absl::string_view command, const absl::Status& status) {
  io.err << command << ": " << status.message() << "\n";
  return status.code() == absl::StatusCode::kInvalidArgument ? kExitUsage : kExitFailure;
}

int UsageError(CommandIo& io, absl::string_view command, absl::string_view message) {
  io.err << command << ": " << message << "\n";
  return kExitUsage;
}

absl::StatusOr<std::string> DataTextFrom(const po::variables_map& vars) {
  if (vars.count("data") && vars.count("data-file")) {
    return InvalidArgument("give either --data or --data-file, not both");
  }
  if (vars.count("data")) return vars["data"].as<std::string>();
  std::string text;
  if (vars.count("data-file")) {
    const std::string path = vars["data-file"].as<std::string>();
    std::ifstream file(path, std::ios::binary);
    if (!file) return InvalidArgument(absl::StrCat("cannot read --data-file '", path, "'"));
    text.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  } else {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  return text;
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
                        "daemon address, HOST:PORT, or https://HOST:PORT for a daemon serving TLS")(
      "ca-file", po::value<std::string>()->default_value(""),
      "with https://: PEM CA certificates the daemon's certificate must chain to (default: the "
      "system's trusted CAs)")(
      "client-cert", po::value<std::string>()->default_value(""),
      "with https://: PEM client certificate, for a daemon that asks for one")(
      "client-key", po::value<std::string>()->default_value(""),
      "the private key of --client-cert")(
      "auth-token", po::value<std::string>()->default_value(""),
      "bearer token (a static token or a JWT) for a daemon with credentials (best kept in a "
      "--config file: a flag shows in the process list)");
}

client::ClientOptions ClientOptionsFrom(const po::variables_map& vars) {
  client::ClientOptions options;
  options.token = vars["auth-token"].as<std::string>();
  absl::StatusOr<client::ServerAddress> server =
      client::ParseServerAddress(vars["server"].as<std::string>());
  options.tls.enabled = server.ok() && server->tls;
  options.tls.ca_file = vars["ca-file"].as<std::string>();
  options.tls.cert_file = vars["client-cert"].as<std::string>();
  options.tls.key_file = vars["client-key"].as<std::string>();
  return options;
}

}  // namespace keel::cli
