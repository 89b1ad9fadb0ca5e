#include "keel/cmd/keel/cli.h"

#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"
#include "keel/cmd/keel/command.h"
#include "keel/drivers/builtin_drivers.h"

namespace keel::cli {
namespace {

void PrintUsage(const std::vector<std::unique_ptr<Command>>& commands, std::ostream& out) {
  out << "Usage: keel <command> [options]\n\n"
         "Keel publishes events to named streams, replays them from a cursor and follows\n"
         "them live. Run `keel <command> --help` for a command's options.\n\nCommands:\n";
  for (const auto& command : commands) {
    out << "  " << command->name() << std::string(12 - std::min<size_t>(11, command->name().size()), ' ')
        << command->summary() << "\n";
  }
}

po::options_description OptionsOf(const Command& command) {
  po::options_description options(std::string("Options for `keel ") +
                                  std::string(command.name()) + "`");
  options.add_options()("help,h", "show this help")(
      "config", po::value<std::string>(),
      "read further options from this file (`key = value` lines; a `[section]` block sets "
      "driver options named section.key, such as a [cold_store] block); flags take "
      "precedence");
  command.AddOptions(options);
  return options;
}

// A `[section]` block of a config file sets driver options named
// `section.key` (the durable driver's cold_store.endpoint, say, in a
// [cold_store] block): each of its lines becomes a --driver-option
// section.key=value, unless a --driver-option flag set that key (flags take
// precedence). Any other key the command does not declare is refused, as
// without blocks.
void BlocksToDriverOptions(const po::options_description& options, const po::variables_map& flags,
                           po::parsed_options& parsed) {
  const bool takes_driver_options = options.find_nothrow("driver-option", false) != nullptr;
  std::set<std::string> flagged;
  if (flags.count("driver-option")) {
    for (const std::string& assignment : flags["driver-option"].as<std::vector<std::string>>()) {
      flagged.insert(std::string(absl::StripAsciiWhitespace(
          absl::string_view(assignment).substr(0, assignment.find('=')))));
    }
  }
  std::vector<po::option> kept;
  for (po::option& option : parsed.options) {
    if (option.unregistered) {
      const std::string key = option.string_key;
      if (!takes_driver_options || key.find('.') == std::string::npos) {
        throw po::unknown_option(key);
      }
      if (flagged.count(key)) continue;
      const std::string value = option.value.empty() ? "" : option.value.front();
      option.string_key = "driver-option";
      option.value = {key + "=" + value};
      option.original_tokens = option.value;
      option.unregistered = false;
    }
    kept.push_back(std::move(option));
  }
  parsed.options = std::move(kept);
}

// Parses flags, then the --config file. Throws po::error on bad input.
po::variables_map Parse(const Command& command, const po::options_description& options, int argc,
                        const char* const* argv) {
  po::positional_options_description positionals;
  for (const std::string& name : command.Positionals()) positionals.add(name.c_str(), 1);
  po::variables_map vars;
  po::store(po::command_line_parser(argc, argv).options(options).positional(positionals).run(),
            vars);
  if (vars.count("config") && !vars.count("help")) {
    const std::string path = vars["config"].as<std::string>();
    std::ifstream file(path);
    if (!file) throw po::error("cannot read config file '" + path + "'");
    po::parsed_options parsed = po::parse_config_file(file, options, /*allow_unregistered=*/true);
    BlocksToDriverOptions(options, vars, parsed);
    po::store(parsed, vars);
  }
  po::notify(vars);
  return vars;
}

}  // namespace

int Main(int argc, const char* const* argv) { return Main(argc, argv, std::cout, std::cerr); }

int Main(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  LinkBuiltinDrivers();
  std::vector<std::unique_ptr<Command>> commands = BuiltinCommands();
  if (argc < 2 || absl::string_view(argv[1]) == "--help" || absl::string_view(argv[1]) == "-h" ||
      absl::string_view(argv[1]) == "help") {
    PrintUsage(commands, argc < 2 ? err : out);
    return argc < 2 ? kExitUsage : kExitOk;
  }
  const absl::string_view name = argv[1];
  for (const auto& command : commands) {
    if (command->name() != name) continue;
    po::options_description options = OptionsOf(*command);
    CommandIo io{out, err};
    try {
      po::variables_map vars = Parse(*command, options, argc - 1, argv + 1);
      if (vars.count("help")) {
        out << "keel " << command->name() << ": " << command->summary() << "\n\n" << options;
        return kExitOk;
      }
      return command->Run(vars, io);
    } catch (const std::exception& e) {
      err << "keel " << name << ": " << e.what() << "\n";
      return kExitUsage;
    }
  }
  err << "keel: unknown command '" << name << "'\n\n";
  PrintUsage(commands, err);
  return kExitUsage;
}

}  // namespace keel::cli
