// `keel bench <mode>`: benchmarks that print figures and ratios against a
// baseline measured in the same run. Modes live in cmd/keel-bench/*_bench.cc.
#include <ostream>

#include "cmd/keel-bench/bench_mode.h"
#include "cmd/keel/command.h"

namespace keel::cli {
namespace bench {

std::vector<std::unique_ptr<BenchMode>> BenchModes() {
  std::vector<std::unique_ptr<BenchMode>> modes;
  modes.push_back(NewStorageBench());
  modes.push_back(NewHttpBench());
  modes.push_back(NewSseBench());
  return modes;
}

}  // namespace bench

namespace {

class BenchCommand : public Command {
 public:
  BenchCommand() : modes_(bench::BenchModes()) {}

  absl::string_view name() const override { return "bench"; }
  absl::string_view summary() const override {
    return "run a benchmark mode (storage, http, sse) and print figures against a same-run baseline";
  }
  void AddOptions(po::options_description& options) const override {
    std::string modes;
    for (const auto& mode : modes_) {
      if (!modes.empty()) modes += ", ";
      modes += std::string(mode->name());
    }
    options.add_options()("mode", po::value<std::string>(),
                          ("benchmark to run (positional): " + modes).c_str());
    for (const auto& mode : modes_) {
      po::options_description group("Mode `" + std::string(mode->name()) + "`: " +
                                    std::string(mode->summary()));
      mode->AddOptions(group);
      // Shared flags (--quick, --dir, ...) may be declared by several modes;
      // register each name once.
      po::options_description unique("Mode `" + std::string(mode->name()) + "`: " +
                                     std::string(mode->summary()));
      for (const auto& option : group.options()) {
        if (options.find_nothrow(option->long_name(), false) == nullptr) unique.add(option);
      }
      options.add(unique);
    }
  }
  std::vector<std::string> Positionals() const override { return {"mode"}; }

  int Run(const po::variables_map& vars, CommandIo& io) const override {
    if (!vars.count("mode")) {
      io.err << "keel bench: name a mode; run `keel bench --help` for the list\n";
      return kExitUsage;
    }
    const std::string requested = vars["mode"].as<std::string>();
    for (const auto& mode : modes_) {
      if (mode->name() == requested) return mode->Run(vars, io);
    }
    io.err << "keel bench: unknown mode '" << requested << "'; modes:";
    for (const auto& mode : modes_) io.err << " " << mode->name();
    io.err << "\n";
    return kExitUsage;
  }

 private:
  const std::vector<std::unique_ptr<bench::BenchMode>> modes_;
};

}  // namespace

std::unique_ptr<Command> NewBenchCommand() { return std::make_unique<BenchCommand>(); }

}  // namespace keel::cli
