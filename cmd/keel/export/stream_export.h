// ExportStream: one pass of a lakehouse export over one stream — the events
// after its checkpoint, cut into files of ExportLayout, each linked into
// the target and then checkpointed (rfcs/0011-lakehouse-export.md).
//
// Exactly once across crashes: a file's bytes depend only on the events it
// holds, and where a file ends depends only on the events after the
// checkpoint and the pass's head. Before writing a file the pass looks for
// one an interrupted pass linked at the same start (a crash between the
// link and the checkpoint): it rebuilds that file's range, compressed as
// that file is, and adopts the file when it holds the same lines (the same
// bytes for a plain file, the same content for a zstd one), and fails,
// naming the file, when it does not. A target's PutIfAbsent never replaces
// a file either.
//
// Retention: events trimmed before the export read them are recorded as a
// gap file (ExportLayout) and the export goes on from the oldest retained.
//
// Thread safety: none; one pass per (export, stream) at a time.
#ifndef KEEL_CMD_KEEL_EXPORT_STREAM_EXPORT_H_
#define KEEL_CMD_KEEL_EXPORT_STREAM_EXPORT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/cmd/keel/export/export_layout.h"
#include "keel/cmd/keel/export/export_source.h"
#include "keel/coldstore/cold_store.h"
#include "keel/core/clock.h"

namespace keel::lakehouse {

struct ExportOptions {
  // Names the checkpoints: consumer group "export.<name>" on each stream.
  std::string name = "default";
  // A file holds at most this many events, and stops at the first event
  // that would take it past `max_file_bytes` (one event always fits).
  size_t max_file_events = 100'000;
  size_t max_file_bytes = 64 << 20;  // Before compression.
  // Files of a new range: `.jsonl`, or `.jsonl.zst` for kZstd. A range a
  // crashed pass linked is finished as that file is.
  ExportCompression compression = ExportCompression::kNone;
  // A file that the stream's head ends (rather than a day or a size) is
  // written only once its first event is this old, so that a continuous
  // export of a quiet stream does not write a file per pass. Zero: every
  // pass writes up to the head.
  absl::Duration flush_after = absl::ZeroDuration();
  // Events read per page.
  size_t read_limit = 1000;
  // When set and true, a pass stops before its next file (a daemon
  // shutting down); what it linked is checkpointed.
  const std::atomic<bool>* stop = nullptr;
};

// The checkpoint group of an export.
std::string CheckpointGroup(absl::string_view export_name);

struct StreamExportReport {
  uint64_t files_written = 0;     // Linked by this pass.
  uint64_t files_adopted = 0;     // Found linked by an interrupted pass, identical.
  uint64_t events = 0;            // In those files.
  uint64_t bytes = 0;             // As stored (compressed).
  uint64_t gaps = 0;              // Gap files written.
  uint64_t missed = 0;            // Events they record.
  uint64_t exported_through = 0;  // The checkpoint's sequence after the pass.
  uint64_t lag = 0;               // Events after it, up to the head last read.
};

// Adds `pass`'s counters (files, events, bytes, gaps, missed, lag) to `sum`.
void AddCounts(StreamExportReport& sum, const StreamExportReport& pass);

absl::StatusOr<StreamExportReport> ExportStream(ExportSource& source, ColdStore& target,
                                                absl::string_view stream,
                                                const ExportOptions& options, const Clock& clock);

}  // namespace keel::lakehouse

#endif  // KEEL_CMD_KEEL_EXPORT_STREAM_EXPORT_H_
