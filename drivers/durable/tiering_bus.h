// TieringBus: the durable bus with a cold store. Trim, which the daemon's
// trimmer calls with a budget, also runs a tiering pass (cold_tier.h):
// recovery of unfinished steps, streams past their hot window moved to
// cold segments, expired objects deleted; NeedsTrim also says when that has
// work. It is the bus's TieredStorage (tiers()): each stream's hot and cold
// bounds, and the tier's figures. Everything else is the inner bus's.
//
// A cold store that fails pauses tiering without failing Trim (the tier
// warned once and counts it); publishing is unaffected.
//
// Thread safety: as the inner bus; Trim is called by one thread at a time.
#ifndef KEEL_DRIVERS_DURABLE_TIERING_BUS_H_
#define KEEL_DRIVERS_DURABLE_TIERING_BUS_H_

#include <memory>

#include "keel/core/clock.h"
#include "keel/core/forwarding_bus.h"
#include "keel/core/tiered_storage.h"
#include "keel/drivers/durable/durable_log.h"

namespace keel::durable {

class TieringBus final : public ForwardingBus, public TieredStorage {
 public:
  // `log` is the inner bus's log, owned by it.
  TieringBus(std::unique_ptr<EventBus> inner, DurableLog* log, Clock* clock)
      : ForwardingBus(std::move(inner)), bus_(&this->inner()), log_(log), clock_(clock) {}

  absl::StatusOr<TrimReport> Trim(size_t budget) override;
  bool NeedsTrim() const override;

  TieredStorage* tiers() override { return this; }

  // TieredStorage.
  absl::StatusOr<StreamTiers> TiersOf(absl::string_view stream) override {
    return log_->TiersOf(stream);
  }
  ColdStats Stats() const override { return log_->cold()->Stats(); }

 private:
  RetentionLimits HotOf(absl::string_view stream) const;

  EventBus* const bus_;
  DurableLog* const log_;
  Clock* const clock_;
};

}  // namespace keel::durable

#endif  // KEEL_DRIVERS_DURABLE_TIERING_BUS_H_
