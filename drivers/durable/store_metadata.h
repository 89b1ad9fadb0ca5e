// The durable driver's MetadataStore: records under the prefix "X" of its
// StateStore (rfcs/0003-durable-layout.md), written with sync so that a
// declaration or group cursor that was acknowledged survives a crash.
//
// Thread safety: as the StateStore (safe to call concurrently).
#ifndef KEEL_DRIVERS_DURABLE_STORE_METADATA_H_
#define KEEL_DRIVERS_DURABLE_STORE_METADATA_H_

#include <memory>

#include "keel/core/metadata_store.h"
#include "keel/statestore/state_store.h"

namespace keel::durable {

std::unique_ptr<MetadataStore> NewStoreMetadata(std::shared_ptr<StateStore> store);

// The StateStore key of the MetadataStore record `key`: for records written
// in a batch of the log's own (StreamLog::StoresRecords).
std::string MetadataRecordKey(absl::string_view key);

}  // namespace keel::durable

#endif  // KEEL_DRIVERS_DURABLE_STORE_METADATA_H_
