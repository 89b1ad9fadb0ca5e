#include "keel/drivers/builtin_drivers.h"

#include "keel/core/driver_factory.h"

KEEL_DECLARE_DRIVER_HOOK(memory);
KEEL_DECLARE_DRIVER_HOOK(durable);
KEEL_DECLARE_DRIVER_HOOK(jetstream);

namespace keel {

void LinkBuiltinDrivers() {
  KEEL_FORCE_LINK_DRIVER(memory);
  KEEL_FORCE_LINK_DRIVER(durable);
  KEEL_FORCE_LINK_DRIVER(jetstream);
}

absl::string_view DefaultDriverName() { return "durable"; }

absl::string_view EphemeralDriverName() { return "memory"; }

}  // namespace keel
