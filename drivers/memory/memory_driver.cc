// Registers the `memory` driver.
#include "keel/core/driver_factory.h"
#include "keel/core/status_macros.h"
#include "keel/drivers/memory/memory_bus.h"

namespace keel {
namespace {

class MemoryDriverFactory : public DriverFactory {
 public:
  absl::string_view name() const override { return "memory"; }
  absl::string_view description() const override {
    return "bounded in-memory ring per stream; nothing survives the process";
  }
  // As MemoryRingLimitsFromConfig reads them.
  std::vector<OptionSpec> options() const override {
    const MemoryRingLimits defaults;
    return {
        UintOption("max_events_per_stream", defaults.max_events_per_stream,
                   "newest events each stream keeps (at least 1); older ones are evicted"),
        UintOption("max_bytes_per_stream", defaults.max_bytes_per_stream,
                   "bytes of newest events each stream keeps (at least 1); older ones are "
                   "evicted"),
    };
  }
  DriverTraits Traits(const Config&) const override {
    return DriverTraits{
        .publishes_may_block = false, .keeps_history = false, .several_writers = false};
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
