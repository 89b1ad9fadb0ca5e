#include "core/driver_factory.h"

#include "core/status_macros.h"

namespace keel {

Registry<DriverFactory>& DriverRegistry() {
  static auto* const registry = new Registry<DriverFactory>("driver");
  return *registry;
}

absl::StatusOr<std::unique_ptr<EventBus>> CreateBus(absl::string_view name, const Config& config,
                                                    const DriverContext& context) {
  KEEL_ASSIGN_OR_RETURN(std::shared_ptr<DriverFactory> factory, DriverRegistry().Find(name));
  return factory->Create(config, context);
}

}  // namespace keel
