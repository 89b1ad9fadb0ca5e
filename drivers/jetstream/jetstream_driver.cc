// Registers the `jetstream` driver: Keel on a NATS JetStream server or
// cluster, shared by every daemon that opens the same bus. Options:
// drivers/jetstream/jetstream_options.h.
#include "absl/strings/str_cat.h"
#include "core/driver_factory.h"
#include "core/status_macros.h"
#include "drivers/jetstream/jetstream_bus.h"
#include "drivers/jetstream/jetstream_options.h"

namespace keel {
namespace {

class JetStreamDriverFactory : public DriverFactory {
 public:
  absl::string_view name() const override { return "jetstream"; }
  absl::string_view description() const override {
    static const std::string* const kDescription = new std::string(
        absl::StrCat("events in a NATS JetStream stream, shared by daemons (options: ",
                     jetstream::kJetStreamOptionNames, ")"));
    return *kDescription;
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
