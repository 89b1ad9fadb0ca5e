// ForwardingBus: an EventBus that passes every call to an inner bus, for
// wrappers that change one behaviour (the durable driver's degraded mode
// adds a reason; tests hold publishes at a gate) and must forward the rest
// without forgetting any method. A wrapper that changes PublishBatch changes
// PublishBatchAsync too (or says PublishesAsync() is false, so that callers
// use PublishBatch): forwarded, it would go around the wrapper.
//
// Thread safety: as the inner bus.
#ifndef KEEL_CORE_FORWARDING_BUS_H_
#define KEEL_CORE_FORWARDING_BUS_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "keel/core/event_bus.h"

namespace keel {

class ForwardingBus : public EventBus {
 public:
  explicit ForwardingBus(std::unique_ptr<EventBus> inner) : inner_(std::move(inner)) {}

  using EventBus::Publish;
  using EventBus::PublishBatch;
  absl::StatusOr<Receipt> Publish(Event event, const PublishOptions& options) override {
    return inner_->Publish(std::move(event), options);
  }
  absl::StatusOr<std::vector<Receipt>> PublishBatch(absl::string_view stream,
                                                    std::vector<Event> events,
                                                    const PublishOptions& options) override {
    return inner_->PublishBatch(stream, std::move(events), options);
  }
  void PublishBatchAsync(absl::string_view stream, std::vector<Event> events,
                         const PublishOptions& options, PublishDone done) override {
    inner_->PublishBatchAsync(stream, std::move(events), options, std::move(done));
  }
  bool PublishesAsync() const override { return inner_->PublishesAsync(); }
  absl::StatusOr<std::unique_ptr<Subscription>> Subscribe(
      const SubscribeOptions& options) override {
    return inner_->Subscribe(options);
  }
  absl::Status Declare(absl::string_view stream, const StreamPolicy& policy) override {
    return inner_->Declare(stream, policy);
  }
  absl::StatusOr<StreamPolicy> PolicyOf(absl::string_view stream) override {
    return inner_->PolicyOf(stream);
  }
  absl::StatusOr<std::vector<StreamDeclaration>> Declarations() override {
    return inner_->Declarations();
  }
  absl::StatusOr<TrimReport> Trim(size_t budget) override { return inner_->Trim(budget); }
  bool NeedsTrim() const override { return inner_->NeedsTrim(); }
  absl::StatusOr<DeletionReport> DeleteStream(absl::string_view stream) override {
    return inner_->DeleteStream(stream);
  }
  ConsumerGroups* groups() override { return inner_->groups(); }
  TieredStorage* tiers() override { return inner_->tiers(); }
  Replayer* replayer() override { return inner_->replayer(); }
  std::string DegradedReason() const override { return inner_->DegradedReason(); }
  absl::Status Close(absl::Duration drain_timeout) override { return inner_->Close(drain_timeout); }

 protected:
  EventBus& inner() { return *inner_; }

 private:
  const std::unique_ptr<EventBus> inner_;
};

}  // namespace keel

#endif  // KEEL_CORE_FORWARDING_BUS_H_
