// Registers the `durable` driver.
//
// Options (declared in options(), read by DurableOptionsFromConfig and
// MemoryRingLimitsFromConfig): "store" names the StateStore (leveldb,
// memory, ...); options prefixed "store." go to that store without the
// prefix (e.g. store.path), and are the ones it declares; "sync",
// "sync_interval", "max_group_bytes", "head_checkpoint_bytes";
// "max_events_per_stream"/"max_bytes_per_stream" size the memory ring used
// in degraded mode. Without "store" (or with "none") the driver degrades
// loudly: it logs a warning, publishes a `runtime.warning` event to stream
// `keel.runtime`, and runs as the memory ring.
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "keel/coldstore/builtin_cold_stores.h"
#include "keel/coldstore/cold_store.h"
#include "keel/core/driver_factory.h"
#include "keel/core/status_macros.h"
#include "keel/drivers/durable/degraded_bus.h"
#include "keel/drivers/durable/durable_bus.h"
#include "keel/drivers/durable/runtime_warning.h"
#include "keel/drivers/memory/memory_bus.h"
#include "keel/statestore/builtin_stores.h"

namespace keel {
namespace {

constexpr char kStorePrefix[] = "store.";
// The value of "store" that, like none at all, runs degraded.
constexpr char kNoStore[] = "none";

// The configured store's name; empty when degraded.
std::string StoreNameOf(const Config& config) {
  std::string name = config.GetString("store", "");
  return name == kNoStore ? "" : name;
}

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

// `store`'s options as the driver takes them: "store."-prefixed, with the
// store named in their help (several stores may declare the same name).
std::vector<OptionSpec> PrefixedOptionsOf(const StoreFactory& store) {
  std::vector<OptionSpec> specs = store.options();
  for (OptionSpec& spec : specs) {
    spec.name = absl::StrCat(kStorePrefix, spec.name);
    spec.help = absl::StrCat("store ", store.name(), ": ", spec.help);
  }
  return specs;
}

class DurableDriverFactory : public DriverFactory {
 public:
  absl::string_view name() const override { return "durable"; }
  absl::string_view description() const override {
    return "events persisted through a StateStore, group-committed";
  }

  // Its own options, then those of every registered store and cold store.
  std::vector<OptionSpec> options() const override {
    std::vector<OptionSpec> specs = OwnOptions();
    AddColdStoreOptions(specs);
    for (const std::string& name : StoreRegistry().RegisteredNames()) {
      absl::StatusOr<std::shared_ptr<StoreFactory>> store = StoreRegistry().Find(name);
      if (!store.ok()) continue;  // Unregistered since: nothing to list.
      std::vector<OptionSpec> prefixed = PrefixedOptionsOf(**store);
      specs.insert(specs.end(), prefixed.begin(), prefixed.end());
    }
    return specs;
  }

  // Its own options and those of the store `config` names; kNotFound
  // listing the registered stores when there is no such store.
  absl::StatusOr<std::vector<OptionSpec>> OptionsFor(const Config& config) const override {
    std::vector<OptionSpec> specs = OwnOptions();
    AddColdStoreOptions(specs);
    const std::string store_name = StoreNameOf(config);
    if (store_name.empty()) return specs;
    KEEL_ASSIGN_OR_RETURN(std::shared_ptr<StoreFactory> store, StoreRegistry().Find(store_name));
    std::vector<OptionSpec> prefixed = PrefixedOptionsOf(*store);
    specs.insert(specs.end(), prefixed.begin(), prefixed.end());
    return specs;
  }

  // A publish waits for its commit's fsync unless the store keeps nothing
  // on disk or sync=none leaves writes to the OS. (A LevelDB write with
  // sync=none can still stall briefly under compaction; that is not a wait
  // for the disk a caller needs to plan threads for.)
  DriverTraits Traits(const Config& config) const override {
    DriverTraits traits{
        .publishes_may_block = false, .keeps_history = false, .several_writers = false};
    const std::string store_name = StoreNameOf(config);
    if (store_name.empty()) return traits;  // Degraded: the memory ring.
    absl::StatusOr<std::shared_ptr<StoreFactory>> store = StoreRegistry().Find(store_name);
    if (!store.ok()) return DriverTraits{};  // Not validated: promise nothing.
    const StoreTraits store_traits = (*store)->Traits(StoreConfigOf(config));
    traits.publishes_may_block =
        store_traits.synced_writes_wait_for_disk && config.GetString("sync", "") != "none";
    traits.keeps_history = store_traits.keeps_data;
    return traits;
  }

  absl::StatusOr<std::unique_ptr<EventBus>> Create(const Config& config,
                                                   const DriverContext& context) const override {
    const std::string store_name = StoreNameOf(config);
    if (store_name.empty()) return OpenDegraded(config, context);
    KEEL_ASSIGN_OR_RETURN(DurableOptions options, DurableOptionsFromConfig(config));
    KEEL_ASSIGN_OR_RETURN(options.cold.store, ColdStoreFromConfig(config));
    KEEL_ASSIGN_OR_RETURN(std::unique_ptr<StateStore> store,
                          OpenStore(store_name, StoreConfigOf(config)));
    return OpenDurableBus(std::move(store), options, context);
  }

 private:
  // "cold_store.<option>" for the options of every cold store, once each.
  static void AddColdStoreOptions(std::vector<OptionSpec>& specs) {
    LinkBuiltinColdStores();
    for (const std::string& name : ColdStoreRegistry().RegisteredNames()) {
      absl::StatusOr<std::shared_ptr<ColdStoreFactory>> store = ColdStoreRegistry().Find(name);
      if (!store.ok()) continue;
      for (OptionSpec spec : (*store)->options()) {
        if (spec.name == "path") continue;  // Given as cold_store=fs:<path>.
        spec.name = absl::StrCat("cold_store.", spec.name);
        if (FindOption(specs, spec.name) != nullptr) continue;
        spec.help = absl::StrCat("cold store ", name, ": ", spec.help);
        spec.flag.clear();
        specs.push_back(std::move(spec));
      }
    }
  }

  // As DurableOptionsFromConfig and MemoryRingLimitsFromConfig read them.
  static std::vector<OptionSpec> OwnOptions() {
    LinkBuiltinStores();
    const DurableOptions defaults;
    const MemoryRingLimits ring;
    return {
        // A daemon runs on LevelDB, syncing every commit, unless told otherwise.
        StringOption("store", kNoStore,
                     absl::StrCat("the state store, by registered name (",
                                  absl::StrJoin(StoreRegistry().RegisteredNames(), ", "),
                                  "); none runs degraded: events are kept in a bounded memory "
                                  "ring and lost on exit"))
            .WithFlag("store", "leveldb"),
        EnumOption("sync", {"always", "interval", "none"}, "always",
                   "always: a publish is acknowledged once fsynced; interval: synced every "
                   "sync_interval; none: left to the OS")
            .WithFlag("sync", "always"),
        DurationOption("sync_interval", defaults.sync_interval,
                       "with sync=interval, the longest time a write stays unsynced"),
        UintOption("max_group_bytes", defaults.max_group_bytes,
                   "upper bound of one group commit (at least 1)"),
        UintOption("head_checkpoint_bytes", defaults.head_checkpoint_bytes,
                   "bytes committed between two writes of every lagging stream head; bounds "
                   "what recovery reads after a crash (0: every commit)"),
        StringOption("cold_store", "none",
                     "where events past a stream's hot window (policy hot.*) go as cold "
                     "segments: fs:<directory>, or s3 with the cold_store.* options; none keeps "
                     "every event hot")
            .WithFlag("cold-store"),
        UintOption("cold_segment_events", defaults.cold.segment_events,
                   "events per cold segment, at most"),
        UintOption("cold_segment_bytes", defaults.cold.segment_bytes,
                   "stored bytes per cold segment, about"),
        DurationOption("cold_orphan_grace", defaults.cold.orphan_grace,
                       "how long a cold object no record names is left before it is deleted"),
        UintOption("max_events_per_stream", ring.max_events_per_stream,
                   "without a store: newest events each stream keeps in the memory ring"),
        UintOption("max_bytes_per_stream", ring.max_bytes_per_stream,
                   "without a store: bytes of newest events each stream keeps in the memory "
                   "ring"),
    };
  }
};

}  // namespace
}  // namespace keel

KEEL_REGISTER_DRIVER(durable, keel::DurableDriverFactory);
