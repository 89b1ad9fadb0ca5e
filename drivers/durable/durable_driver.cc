// Registers the `durable` driver.
//
// Options: "store" names the StateStore (leveldb, memory, ...); options
// prefixed "store." go to the store without the prefix (e.g. store.path);
// "sync", "sync_interval", "max_group_bytes", "head_checkpoint_bytes"
// (DurableOptionsFromConfig);
// "max_events_per_stream"/"max_bytes_per_stream" size the memory ring used
// in degraded mode. Without "store" the driver degrades loudly: it logs a
// warning, publishes a `runtime.warning` event to stream `keel.runtime`, and
// runs as the memory ring.
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/driver_factory.h"
#include "core/status_macros.h"
#include "drivers/durable/degraded_bus.h"
#include "drivers/durable/durable_bus.h"
#include "drivers/durable/runtime_warning.h"
#include "drivers/memory/memory_bus.h"

namespace keel {
namespace {

constexpr char kStorePrefix[] = "store.";

Config StoreConfigOf(const Config& config) {
  Config store;
  for (const auto& [key, value] : config.values()) {
    if (absl::StartsWith(key, kStorePrefix)) store.Set(key.substr(sizeof(kStorePrefix) - 1), value);
  }
  return store;
}

absl::StatusOr<std::unique_ptr<EventBus>> OpenDegraded(const Config& config,
                                                       const DriverContext& context) {
  KEEL_ASSIGN_OR_RETURN(MemoryRingLimits limits, MemoryRingLimitsFromConfig(config));
  const std::string reason =
      "durable driver has no store configured (option 'store'): events are kept in a bounded "
      "memory ring and lost on exit";
  context.logger->Warn(absl::StrCat("keel: ", reason));
  auto bus = std::make_unique<DegradedBus>(NewMemoryBus(limits, context), reason);
  KEEL_RETURN_IF_ERROR(bus->Publish(durable::RuntimeWarning(reason)).status());
  return bus;
}

class DurableDriverFactory : public DriverFactory {
 public:
  absl::string_view name() const override { return "durable"; }
  absl::string_view description() const override {
    return "events persisted through a StateStore (options: store, store.*, sync, "
           "sync_interval, max_group_bytes, head_checkpoint_bytes)";
  }
  absl::StatusOr<std::unique_ptr<EventBus>> Create(const Config& config,
                                                   const DriverContext& context) const override {
    const std::string store_name = config.GetString("store", "");
    if (store_name.empty()) return OpenDegraded(config, context);
    KEEL_ASSIGN_OR_RETURN(DurableOptions options, DurableOptionsFromConfig(config));
    KEEL_ASSIGN_OR_RETURN(std::unique_ptr<StateStore> store,
                          OpenStore(store_name, StoreConfigOf(config)));
    return OpenDurableBus(std::move(store), options, context);
  }
};

}  // namespace
}  // namespace keel

KEEL_REGISTER_DRIVER(durable, keel::DurableDriverFactory);
