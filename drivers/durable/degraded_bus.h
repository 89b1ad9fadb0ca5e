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

#include "core/event_bus.h"

namespace keel {

class DegradedBus final : public EventBus {
 public:
  DegradedBus(std::unique_ptr<EventBus> inner, std::string reason)
      : inner_(std::move(inner)), reason_(std::move(reason)) {}

  absl::StatusOr<Receipt> Publish(Event event) override { return inner_->Publish(std::move(event)); }
  absl::StatusOr<std::vector<Receipt>> PublishBatch(absl::string_view stream,
                                                    std::vector<Event> events) override {
    return inner_->PublishBatch(stream, std::move(events));
  }
  absl::StatusOr<std::unique_ptr<Subscription>> Subscribe(
      const SubscribeOptions& options) override {
    return inner_->Subscribe(options);
  }
  Replayer* replayer() override { return inner_->replayer(); }
  std::string DegradedReason() const override { return reason_; }
  absl::Status Close(absl::Duration drain_timeout) override { return inner_->Close(drain_timeout); }

 private:
  const std::unique_ptr<EventBus> inner_;
  const std::string reason_;
};

}  // namespace keel

#endif  // KEEL_DRIVERS_DURABLE_DEGRADED_BUS_H_
