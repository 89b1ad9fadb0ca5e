// Drivers by name.
//
// A driver is an EventBus implementation created by a DriverFactory that is
// registered under a unique name. Built-in drivers register themselves with
// KEEL_REGISTER_DRIVER; host programs do the same in their own source files
// (one line) or call DriverRegistry().Register(...) at run time, then select
// the driver by name from config:
//
//   KEEL_REGISTER_DRIVER(my_ring, MyRingFactory);   // in my_ring.cc
//   auto bus = keel::CreateBus("my-ring", config, context);
//
// A factory describes itself: options() declares every option it takes
// (core/option_spec.h), and CreateBus refuses a Config with a key it does
// not declare or a value not of the declared type, naming the valid options,
// before the driver sees it; Traits() tells a host how the bus it creates
// behaves, so that a host never has to guess from a driver's name.
//
// Static linking drops object files nobody references; the macro therefore
// also defines a force-link hook, KeelForceLinkDriver_<ident>(), which
// KEEL_DECLARE_DRIVER_HOOK / KEEL_FORCE_LINK_DRIVER reference. keel::LinkBuiltinDrivers()
// (drivers/builtin_drivers.h) does that for the drivers Keel ships.
//
// Thread safety: the registry is internally locked.
#ifndef KEEL_CORE_DRIVER_FACTORY_H_
#define KEEL_CORE_DRIVER_FACTORY_H_

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/core/clock.h"
#include "keel/core/config.h"
#include "keel/core/event_bus.h"
#include "keel/core/logger.h"
#include "keel/core/option_spec.h"
#include "keel/core/redactor.h"
#include "keel/core/registry.h"
#include "keel/core/stream_policy.h"

namespace keel {

// What a driver gets from its host besides its options.
struct DriverContext {
  Clock* clock = Clock::Real();
  std::shared_ptr<Logger> logger = Logger::Default();
  std::shared_ptr<const Redactor> redactor;  // Optional.
  // Optional: called after each write to the driver's store (e.g. one group
  // commit) with its latency, for metrics. Must be cheap and thread-safe.
  std::function<void(absl::Duration latency)> on_store_write;
  // The policy of streams that have no declaration.
  StreamPolicy default_policy;
};

// How a driver's buses behave, with a given Config. Each default is the
// one that promises nothing, so a driver that does not say is handled safely.
struct DriverTraits {
  // A publish may wait for a disk or a network (an fsync per commit, say):
  // a server then runs publishes on threads that may block, never on the
  // threads that serve its connections.
  bool publishes_may_block = true;
  // Published events outlive the process: a bus created again with the same
  // Config replays them, and cursors handed out before still resolve.
  bool keeps_history = false;
  // Other processes may publish to the same streams at the same time, so
  // this process does not see every append as it makes it.
  bool several_writers = true;
};

class DriverFactory {
 public:
  virtual ~DriverFactory() = default;
  virtual absl::string_view name() const = 0;
  virtual absl::string_view description() const = 0;

  // Every option the driver may take, for listing and documentation. The
  // default declares none: such a driver takes no options.
  virtual std::vector<OptionSpec> options() const { return {}; }
  // The options the driver takes once `config`'s are chosen, where some
  // depend on others (the durable driver takes its store's options, which
  // depend on the store its "store" names); kNotFound, say, when `config`
  // names something that does not exist. Defaults to options().
  virtual absl::StatusOr<std::vector<OptionSpec>> OptionsFor(const Config& config) const {
    return options();
  }
  // How the buses created with `config` behave. Called with a Config that
  // ValidateDriverOptions accepted.
  virtual DriverTraits Traits(const Config& config) const { return DriverTraits{}; }

  // Called by CreateBus with a Config that ValidateDriverOptions accepted.
  virtual absl::StatusOr<std::unique_ptr<EventBus>> Create(const Config& config,
                                                           const DriverContext& context) const = 0;
};

Registry<DriverFactory>& DriverRegistry();

// OK when `config` holds only options `factory` declares (OptionsFor),
// each of its declared type; else kInvalidArgument naming the driver, the
// key and the valid options.
absl::Status ValidateDriverOptions(const DriverFactory& factory, const Config& config);

// Looks up `name`, checks `config` (ValidateDriverOptions) and creates the
// driver.
absl::StatusOr<std::unique_ptr<EventBus>> CreateBus(absl::string_view name, const Config& config,
                                                    const DriverContext& context = {});

}  // namespace keel

// Registers FactoryT under its name() and defines the force-link hook. Use at
// namespace scope in the driver's .cc file.
#define KEEL_REGISTER_DRIVER(ident, FactoryT)                            \
  namespace {                                                            \
  const bool keel_driver_registered_##ident =                            \
      ::keel::RegisterOrDie(::keel::DriverRegistry(), std::make_shared<FactoryT>()); \
  }                                                                      \
  extern "C" void KeelForceLinkDriver_##ident() {}

// Declares the hook (namespace scope), then references it (in a function) so
// that a static link keeps the driver's object file and its registration.
#define KEEL_DECLARE_DRIVER_HOOK(ident) extern "C" void KeelForceLinkDriver_##ident()
#define KEEL_FORCE_LINK_DRIVER(ident) KeelForceLinkDriver_##ident()

#endif  // KEEL_CORE_DRIVER_FACTORY_H_
