#include "keel/core/driver_factory.h"

#include "absl/strings/str_cat.h"
#include "keel/core/status_macros.h"

namespace keel {

Registry<DriverFactory>& DriverRegistry() {
  static auto* const registry = new Registry<DriverFactory>("driver");
  return *registry;
}

absl::Status ValidateDriverOptions(const DriverFactory& factory, const Config& config) {
  KEEL_ASSIGN_OR_RETURN(std::vector<OptionSpec> specs, factory.OptionsFor(config));
  return ValidateOptions(absl::StrCat("driver '", factory.name(), "'"), specs, config);
}

absl::StatusOr<std::unique_ptr<EventBus>> CreateBus(absl::string_view name, const Config& config,
                                                    const DriverContext& context) {
  KEEL_ASSIGN_OR_RETURN(std::shared_ptr<DriverFactory> factory, DriverRegistry().Find(name));
  KEEL_RETURN_IF_ERROR(ValidateDriverOptions(*factory, config));
  return factory->Create(config, context);
}

}  // namespace keel
