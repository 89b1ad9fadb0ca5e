// MetadataStore: small named records a bus keeps beside its events — stream
// declarations and consumer-group cursors.
//
// A driver that persists events gives its bus a MetadataStore in the same
// storage (the durable driver keeps the records under their own key prefix
// in its StateStore), so declarations and group cursors survive a restart
// exactly when events do. Drivers without storage use the in-memory one.
// Records are few and small; a Put is durable (synced) when it returns.
//
// Keys are printable, '/'-separated paths ("policy/orders",
// "group/orders/billing"); List returns them sorted.
//
// Thread safety: implementations are safe to call concurrently.
#ifndef KEEL_CORE_METADATA_STORE_H_
#define KEEL_CORE_METADATA_STORE_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace keel {

class MetadataStore {
 public:
  using Record = std::pair<std::string, std::string>;

  virtual ~MetadataStore() = default;

  // nullopt when no record has `key`.
  virtual absl::StatusOr<std::optional<std::string>> Get(absl::string_view key) = 0;
  virtual absl::Status Put(absl::string_view key, absl::string_view value) = 0;
  virtual absl::Status Delete(absl::string_view key) = 0;
  // Every record whose key starts with `prefix`, sorted by key.
  virtual absl::StatusOr<std::vector<Record>> List(absl::string_view prefix) = 0;
};

std::unique_ptr<MetadataStore> NewInMemoryMetadataStore();

}  // namespace keel

#endif  // KEEL_CORE_METADATA_STORE_H_
