#include "keel/drivers/durable/durable_bus.h"

#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"
#include "keel/core/log_bus.h"
#include "keel/core/status_macros.h"
#include "keel/drivers/durable/durable_log.h"
#include "keel/drivers/durable/recovery.h"
#include "keel/drivers/durable/runtime_warning.h"

namespace keel {

absl::StatusOr<DurableOptions> DurableOptionsFromConfig(const Config& config) {
  DurableOptions options;
  const std::string sync = config.GetString("sync", "always");
  if (sync == "always") {
    options.sync = SyncMode::kAlways;
  } else if (sync == "interval") {
    options.sync = SyncMode::kInterval;
  } else if (sync == "none") {
    options.sync = SyncMode::kNone;
  } else {
    return InvalidArgument(
        absl::StrCat("option 'sync': '", sync, "' is not one of always, interval, none"));
  }
  KEEL_ASSIGN_OR_RETURN(options.sync_interval,
                        config.GetDuration("sync_interval", options.sync_interval));
  KEEL_ASSIGN_OR_RETURN(options.max_group_bytes,
                        config.GetUint("max_group_bytes", options.max_group_bytes, 1));
  KEEL_ASSIGN_OR_RETURN(options.head_checkpoint_bytes,
                        config.GetUint("head_checkpoint_bytes", options.head_checkpoint_bytes, 0));
  return options;
}

absl::StatusOr<std::unique_ptr<EventBus>> OpenDurableBus(std::shared_ptr<StateStore> store,
                                                         const DurableOptions& options,
                                                         const DriverContext& context) {
  KEEL_ASSIGN_OR_RETURN(durable::RecoveredState recovered, durable::Recover(*store));
  KEEL_ASSIGN_OR_RETURN(std::optional<durable::OpenMarker> unclean,
                        durable::ReadOpenMarker(*store));
  const std::string lifetime = store->UnsyncedWritesLifetime();
  const bool lost = unclean && durable::MayHaveLostAcknowledgedWrites(*unclean, lifetime);
  // Loudly, and first in the log: whatever fails below, this was said.
  const std::string unclean_message = unclean ? durable::UncleanOpenMessage(*unclean, lost) : "";
  if (unclean) context.logger->Warn(absl::StrCat("durable: ", unclean_message));
  // The open's one write: this process's marker, and a new epoch when the
  // last process may have lost acknowledged events.
  WriteBatch open;
  durable::StageOpenMarker(options.sync == SyncMode::kAlways, lifetime, unclean, lost, open);
  if (lost) durable::StageNewEpoch(recovered, open);
  KEEL_RETURN_IF_ERROR(store->Write(open, WriteOptions{.sync = true}));
  auto log = std::make_unique<durable::DurableLog>(std::move(store), options, context,
                                                   std::move(recovered));
  durable::DurableLog* opened = log.get();
  KEEL_ASSIGN_OR_RETURN(std::unique_ptr<EventBus> bus,
                        NewLogBus(std::move(log), context,
                                  LogBusOptions{.max_group_bytes = options.max_group_bytes}));
  if (unclean) {  // Also on the bus, for whoever follows keel.runtime; the log has it anyway.
    absl::Status published = bus->Publish(durable::RuntimeWarning(unclean_message)).status();
    if (!published.ok()) {
      context.logger->Error(
          absl::StrCat("durable: cannot publish the unclean-shutdown warning "
                       "to keel.runtime: ",
                       published.ToString()));
    }
  }
  opened->Opened();
  return bus;
}

}  // namespace keel
