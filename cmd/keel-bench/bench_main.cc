#include "keel/cmd/keel-bench/bench_main.h"

#include <algorithm>
#include <exception>
#include <fstream>
#include <ostream>
#include <string>

#include <boost/program_options/parsers.hpp>

#include "keel/cmd/keel-bench/bench_mode.h"
#include "keel/drivers/builtin_drivers.h"

namespace keel::bench {

std::vector<std::unique_ptr<BenchMode>> BenchModes() {
  std::vector<std::unique_ptr<BenchMode>> modes;
  modes.push_back(NewStorageBench());
  modes.push_back(NewHttpBench());
  modes.push_back(NewSseBench());
  modes.push_back(NewJetStreamBench());
  modes.push_back(NewPushBench());
  modes.push_back(NewColdBench());
  modes.push_back(NewExportBench());
  return modes;
}

namespace {

void PrintUsage(const std::vector<std::unique_ptr<BenchMode>>& modes, std::ostream& out) {
  out << "Usage: keel-bench <mode> [options]\n\n"
         "Runs one of Keel's benchmarks and prints its figures next to a baseline measured\n"
         "in the same run. Run `keel-bench <mode> --help` for a mode's options.\n\nModes:\n";
  for (const auto& mode : modes) {
    out << "  " << mode->name() << std::string(10 - std::min<size_t>(9, mode->name().size()), ' ')
        << mode->summary() << "\n";
  }
}

po::options_description OptionsOf(const BenchMode& mode) {
  po::options_description options("Options for `keel-bench " + std::string(mode.name()) + "`");
  options.add_options()("help,h", "show this help")(
      "config", po::value<std::string>(),
      "read further options from this file (`key = value` lines); flags take precedence");
  mode.AddOptions(options);
  return options;
}

// Parses flags, then the --config file. Throws po::error on bad input.
po::variables_map Parse(const po::options_description& options, int argc,
                        const char* const* argv) {
  po::variables_map vars;
  po::store(po::command_line_parser(argc, argv).options(options).run(), vars);
  if (vars.count("config") && !vars.count("help")) {
    const std::string path = vars["config"].as<std::string>();
    std::ifstream file(path);
    if (!file) throw po::error("cannot read config file '" + path + "'");
    po::store(po::parse_config_file(file, options), vars);
  }
  po::notify(vars);
  return vars;
}

}  // namespace

int Main(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  // The modes open buses through the driver registry, by name.
  LinkBuiltinDrivers();
  const std::vector<std::unique_ptr<BenchMode>> modes = BenchModes();
  const absl::string_view first = argc < 2 ? "" : argv[1];
  if (argc < 2 || first == "--help" || first == "-h" || first == "help") {
    PrintUsage(modes, argc < 2 ? err : out);
    return argc < 2 ? kExitUsage : kExitOk;
  }
  for (const auto& mode : modes) {
    if (mode->name() != first) continue;
    const po::options_description options = OptionsOf(*mode);
    BenchIo io{out, err};
    try {
      const po::variables_map vars = Parse(options, argc - 1, argv + 1);
      if (vars.count("help")) {
        out << "keel-bench " << mode->name() << ": " << mode->summary() << "\n\n" << options;
        return kExitOk;
      }
      return mode->Run(vars, io);
    } catch (const std::exception& e) {
      err << "keel-bench " << first << ": " << e.what() << "\n";
      return kExitUsage;
    }
  }
  err << "keel-bench: unknown mode '" << first << "'\n\n";
  PrintUsage(modes, err);
  return kExitUsage;
}

}  // namespace keel::bench
