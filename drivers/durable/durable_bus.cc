#include "keel/drivers/durable/durable_bus.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "keel/coldstore/builtin_cold_stores.h"
#include "keel/coldstore/cold_store.h"
#include "keel/core/errors.h"
#include "keel/core/log_bus.h"
#include "keel/core/status_macros.h"
#include "keel/drivers/durable/durable_log.h"
#include "keel/drivers/durable/recovery.h"
#include "keel/drivers/durable/runtime_warning.h"
#include "keel/drivers/durable/tiering_bus.h"

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
  KEEL_ASSIGN_OR_RETURN(options.cold.segment_events,
                        config.GetUint("cold_segment_events", options.cold.segment_events, 1));
  KEEL_ASSIGN_OR_RETURN(options.cold.segment_bytes,
                        config.GetUint("cold_segment_bytes", options.cold.segment_bytes, 1));
  KEEL_ASSIGN_OR_RETURN(options.cold.orphan_grace,
                        config.GetDuration("cold_orphan_grace", options.cold.orphan_grace));
  return options;
}

absl::StatusOr<std::shared_ptr<ColdStore>> ColdStoreFromConfig(const Config& config) {
  const std::string spec = config.GetString("cold_store", "");
  if (spec.empty() || spec == "none") return std::shared_ptr<ColdStore>();
  const size_t colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  Config store;
  for (const auto& [key, value] : config.values()) {
    if (absl::StartsWith(key, "cold_store.")) store.Set(key.substr(11), value);
  }
  if (colon != std::string::npos) {
    if (name != "fs") {
      return InvalidArgument(absl::StrCat("option 'cold_store': '", spec,
                                          "' is fs:<directory>, or s3 with cold_store.* options"));
    }
    store.Set("path", spec.substr(colon + 1));
  }
  LinkBuiltinColdStores();
  KEEL_ASSIGN_OR_RETURN(std::unique_ptr<ColdStore> opened, OpenColdStore(name, store));
  return std::shared_ptr<ColdStore>(std::move(opened));
}

std::optional<ColdStats> ColdStatsOf(EventBus& bus) {
  TieredStorage* tiers = bus.tiers();
  if (tiers == nullptr) return std::nullopt;
  return tiers->Stats();
}

absl::StatusOr<std::unique_ptr<EventBus>> OpenDurableBus(std::shared_ptr<StateStore> store,
                                                         const DurableOptions& options,
                                                         const DriverContext& context) {
  KEEL_ASSIGN_OR_RETURN(durable::RecoveredState recovered, durable::Recover(*store));
  KEEL_ASSIGN_OR_RETURN(durable::ColdRecords cold, durable::ReadColdRecords(*store));
  if (!cold.empty() && options.cold.store == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the store has cold segments (", cold.summaries.size(),
        " streams) but no cold store is configured to read them from (option cold_store, "
        "`keel daemon --cold-store`)"));
  }
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
                                                   std::move(recovered), std::move(cold));
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
  if (durable::ColdTier* tier = opened->cold(); tier != nullptr) {
    // Unfinished tiering and expiry, finished or rolled back now; a cold
    // store that does not answer leaves them to the trimmer's passes.
    if (absl::Status recovered = tier->Recover(); !recovered.ok()) {
      context.logger->Warn(
          absl::StrCat("durable: cold tier recovery left for later: ", recovered.ToString()));
    }
    bus = std::make_unique<durable::TieringBus>(std::move(bus), opened, context.clock);
  }
  opened->Opened();
  return bus;
}

}  // namespace keel
