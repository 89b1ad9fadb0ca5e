// `keel drivers`: each registered driver as it describes itself, a line of
// name and description, then a line per option it declares.
#include <ostream>

#include "keel/cmd/keel/command.h"
#include "keel/core/driver_factory.h"
#include "keel/core/option_spec.h"

namespace keel::cli {
namespace {

// "  name (type, default D; flag --F): help"
void PrintOption(const OptionSpec& spec, std::ostream& out) {
  out << "  " << spec.name << " (" << OptionTypeText(spec);
  if (!spec.default_text.empty()) out << ", default " << spec.default_text;
  if (!spec.flag.empty()) out << "; flag --" << spec.flag;
  out << "): " << spec.help << "\n";
}

class DriversCommand : public Command {
 public:
  absl::string_view name() const override { return "drivers"; }
  absl::string_view summary() const override {
    return "list the registered event-bus drivers: name and description, then each option";
  }
  int Run(const po::variables_map&, CommandIo& io) const override {
    for (const std::string& name : DriverRegistry().RegisteredNames()) {
      absl::StatusOr<std::shared_ptr<DriverFactory>> factory = DriverRegistry().Find(name);
      if (!factory.ok()) continue;  // Unregistered since.
      io.out << name << "\t" << (*factory)->description() << "\n";
      const std::vector<OptionSpec> options = (*factory)->options();
      if (options.empty()) io.out << "  (no options)\n";
      for (const OptionSpec& spec : options) PrintOption(spec, io.out);
    }
    return kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> NewDriversCommand() { return std::make_unique<DriversCommand>(); }

}  // namespace keel::cli
