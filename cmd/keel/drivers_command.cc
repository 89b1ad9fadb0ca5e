#include <ostream>

#include "cmd/keel/command.h"
#include "core/driver_factory.h"

namespace keel::cli {
namespace {

class DriversCommand : public Command {
 public:
  absl::string_view name() const override { return "drivers"; }
  absl::string_view summary() const override {
    return "list the registered event-bus drivers, one per line: name, then description";
  }
  int Run(const po::variables_map&, CommandIo& io) const override {
    for (const std::string& name : DriverRegistry().RegisteredNames()) {
      auto factory = DriverRegistry().Find(name);
      io.out << name;
      if (factory.ok()) io.out << "\t" << (*factory)->description();
      io.out << "\n";
    }
    return kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> NewDriversCommand() { return std::make_unique<DriversCommand>(); }

}  // namespace keel::cli
