#include <ostream>

#include "keel/cmd/keel/command.h"

namespace keel::cli {
namespace {

class VersionCommand : public Command {
 public:
  absl::string_view name() const override { return "version"; }
  absl::string_view summary() const override { return "print Keel's version"; }
  int Run(const po::variables_map&, CommandIo& io) const override {
    io.out << "keel " << KEEL_VERSION << "\n";
    return kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> NewVersionCommand() { return std::make_unique<VersionCommand>(); }

}  // namespace keel::cli
