// BusExportSource: the ExportSource of a daemon's own bus — its Replayer
// for rows and its ConsumerGroups for checkpoints.
//
// Thread safety: as ExportSource; the bus must outlive the source.
#ifndef KEEL_CMD_KEEL_EXPORT_BUS_EXPORT_SOURCE_H_
#define KEEL_CMD_KEEL_EXPORT_BUS_EXPORT_SOURCE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "keel/cmd/keel/export/export_source.h"
#include "keel/core/event_bus.h"

namespace keel::lakehouse {

class BusExportSource : public ExportSource {
 public:
  // kUnimplemented when the bus keeps no history or no consumer groups.
  static absl::StatusOr<std::unique_ptr<BusExportSource>> Create(EventBus& bus);

  absl::StatusOr<std::vector<std::string>> ListStreams(absl::string_view prefix) override;
  absl::StatusOr<ExportPage> Read(absl::string_view stream, const std::optional<std::string>& after,
                                  size_t limit) override;
  absl::StatusOr<std::optional<std::string>> Checkpoint(absl::string_view stream,
                                                        absl::string_view group) override;
  absl::Status SetCheckpoint(absl::string_view stream, absl::string_view group,
                             absl::string_view cursor) override;

 private:
  BusExportSource(Replayer& replayer, ConsumerGroups& groups)
      : replayer_(replayer), groups_(groups) {}

  Replayer& replayer_;
  ConsumerGroups& groups_;
};

}  // namespace keel::lakehouse

#endif  // KEEL_CMD_KEEL_EXPORT_BUS_EXPORT_SOURCE_H_
