// HttpExportSource: the ExportSource of a running daemon, over its HTTP API
// (rfcs/0004-http-api.md): replay pages for rows, each row the event object
// exactly as the daemon sent it, and the export's consumer groups for
// checkpoints (describe, seek). What `keel export` reads.
//
// Errors: the daemon's error codes as the bus's kinds (retention_gap,
// cursor_mismatch, not_found); other failures as the client reports them.
//
// Thread safety: as ExportSource; the client must outlive the source.
#ifndef KEEL_CMD_KEEL_EXPORT_HTTP_EXPORT_SOURCE_H_
#define KEEL_CMD_KEEL_EXPORT_HTTP_EXPORT_SOURCE_H_

#include "keel/cmd/keel/client/http_client.h"
#include "keel/cmd/keel/export/export_source.h"

namespace keel::lakehouse {

class HttpExportSource : public ExportSource {
 public:
  explicit HttpExportSource(client::HttpClient& http) : http_(http) {}

  absl::StatusOr<std::vector<std::string>> ListStreams(absl::string_view prefix) override;
  absl::StatusOr<ExportPage> Read(absl::string_view stream, const std::optional<std::string>& after,
                                  size_t limit) override;
  absl::StatusOr<std::optional<std::string>> Checkpoint(absl::string_view stream,
                                                        absl::string_view group) override;
  absl::Status SetCheckpoint(absl::string_view stream, absl::string_view group,
                             absl::string_view cursor) override;

 private:
  // The body of a 2xx answer to GET `target`; else the error, typed.
  absl::StatusOr<std::string> Get(const std::string& target);

  client::HttpClient& http_;
};

}  // namespace keel::lakehouse

#endif  // KEEL_CMD_KEEL_EXPORT_HTTP_EXPORT_SOURCE_H_
