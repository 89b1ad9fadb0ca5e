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
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/event_bus.h"
#include "core/logger.h"
#include "core/redactor.h"
#include "core/registry.h"
#include "core/stream_policy.h"

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

class DriverFactory {
 public:
  virtual ~DriverFactory() = default;
  virtual absl::string_view name() const = 0;
  virtual absl::string_view description() const = 0;
  virtual absl::StatusOr<std::unique_ptr<EventBus>> Create(const Config& config,
                                                           const DriverContext& context) const = 0;
};

Registry<DriverFactory>& DriverRegistry();

// Looks up `name` and creates the driver.
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
