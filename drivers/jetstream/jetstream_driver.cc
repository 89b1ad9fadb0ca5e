// Registers the `jetstream` driver: Keel on a NATS JetStream server or
// cluster, shared by every daemon that opens the same bus. Options:
// drivers/jetstream/jetstream_options.h.
#include "keel/core/driver_factory.h"
#include "keel/core/status_macros.h"
#include "keel/drivers/jetstream/jetstream_bus.h"
#include "keel/drivers/jetstream/jetstream_options.h"

namespace keel {
namespace {

class JetStreamDriverFactory : public DriverFactory {
 public:
  absl::string_view name() const override { return "jetstream"; }
  absl::string_view description() const override {
    return "events in a NATS JetStream stream or cluster, shared by every daemon of the bus";
  }
  std::vector<OptionSpec> options() const override { return jetstream::JetStreamOptionSpecs(); }
  // Every publish is a network round trip, other daemons append to the same
  // streams, and JetStream keeps the events.
  DriverTraits Traits(const Config&) const override {
    return DriverTraits{
        .publishes_may_block = true, .keeps_history = true, .several_writers = true};
  }
  absl::StatusOr<std::unique_ptr<EventBus>> Create(const Config& config,
                                                   const DriverContext& context) const override {
    KEEL_ASSIGN_OR_RETURN(jetstream::JetStreamOptions options,
                          jetstream::JetStreamOptionsFromConfig(config));
    return jetstream::OpenJetStreamBus(options, context);
  }
};

}  // namespace
}  // namespace keel

KEEL_REGISTER_DRIVER(jetstream, keel::JetStreamDriverFactory);
