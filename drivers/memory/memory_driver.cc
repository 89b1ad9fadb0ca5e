// Registers the `memory` driver.
#include "core/driver_factory.h"
#include "core/status_macros.h"
#include "drivers/memory/memory_bus.h"

namespace keel {
namespace {

class MemoryDriverFactory : public DriverFactory {
 public:
  absl::string_view name() const override { return "memory"; }
  absl::string_view description() const override {
    return "bounded in-memory ring per stream (options: max_events_per_stream, "
           "max_bytes_per_stream)";
  }
  absl::StatusOr<std::unique_ptr<EventBus>> Create(const Config& config,
                                                   const DriverContext& context) const override {
    KEEL_ASSIGN_OR_RETURN(MemoryRingLimits limits, MemoryRingLimitsFromConfig(config));
    return NewMemoryBus(limits, context);
  }
};

}  // namespace
}  // namespace keel

KEEL_REGISTER_DRIVER(memory, keel::MemoryDriverFactory);
