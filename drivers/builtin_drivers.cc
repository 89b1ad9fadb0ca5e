#include "drivers/builtin_drivers.h"

#include "core/driver_factory.h"

KEEL_DECLARE_DRIVER_HOOK(memory);
KEEL_DECLARE_DRIVER_HOOK(durable);
KEEL_DECLARE_DRIVER_HOOK(jetstream);

namespace keel {

void LinkBuiltinDrivers() {
  KEEL_FORCE_LINK_DRIVER(memory);
  KEEL_FORCE_LINK_DRIVER(durable);
  KEEL_FORCE_LINK_DRIVER(jetstream);
}

}  // namespace keel
