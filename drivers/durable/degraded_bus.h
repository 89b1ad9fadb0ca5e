// DegradedBus: wraps a bus and reports why it runs degraded.
//
// The durable driver uses it when no store is configured: it runs on the
// memory ring, says so in DegradedReason() (the daemon shows it in /readyz),
// and forwards everything else unchanged.
//
// Thread safety: as the wrapped bus.
#ifndef KEEL_DRIVERS_DURABLE_DEGRADED_BUS_H_
#define KEEL_DRIVERS_DURABLE_DEGRADED_BUS_H_

#include <memory>
#include <string>

#include "keel/core/forwarding_bus.h"

namespace keel {

class DegradedBus final : public ForwardingBus {
 public:
  DegradedBus(std::unique_ptr<EventBus> inner, std::string reason)
      : ForwardingBus(std::move(inner)), reason_(std::move(reason)) {}

  std::string DegradedReason() const override { return reason_; }

 private:
  const std::string reason_;
};

}  // namespace keel

#endif  // KEEL_DRIVERS_DURABLE_DEGRADED_BUS_H_
