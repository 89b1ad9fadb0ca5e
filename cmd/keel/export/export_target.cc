#include "keel/cmd/keel/export/export_target.h"

#include "absl/strings/str_cat.h"

namespace keel::lakehouse {

absl::StatusOr<std::unique_ptr<ColdStore>> OpenExportTarget(const ExportSpec& spec) {
  const Config options = spec.object_store() ? spec.store_options : Config{{"path", spec.target}};
  absl::StatusOr<std::unique_ptr<ColdStore>> store =
      OpenColdStore(spec.object_store() ? "s3" : "fs", options);
  if (!store.ok()) {
    return absl::Status(store.status().code(),
                        absl::StrCat("export to ", spec.target, ": ", store.status().message()));
  }
  return store;
}

}  // namespace keel::lakehouse
