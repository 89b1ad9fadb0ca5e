// RowQueue: the rows of one stream after an export's checkpoint, read a
// page at a time as the export asks for them, kept until it drops them
// (once they are in a linked file).
//
// When retention trimmed events the queue had not read, it goes on from
// the oldest retained event and remembers the sequences it missed
// (TakeGaps); the rows on either side of a gap are not consecutive.
//
// Thread safety: none.
#ifndef KEEL_CMD_KEEL_EXPORT_ROW_QUEUE_H_
#define KEEL_CMD_KEEL_EXPORT_ROW_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "keel/cmd/keel/export/export_source.h"

namespace keel::lakehouse {

// Sequences `from`..`to` (inclusive) that retention removed unread.
struct MissedRange {
  uint64_t from = 0;
  uint64_t to = 0;
};

class RowQueue {
 public:
  // `after`: the cursor token to read after (the oldest retained when
  // nullopt).
  RowQueue(ExportSource& source, std::string stream, std::optional<std::string> after,
           size_t page_limit);

  // Whether row `index` (0: the oldest kept) exists, reading pages until it
  // does or the stream ends.
  absl::StatusOr<bool> Has(size_t index);
  // Row `index`; Has(index) must have returned true.
  const ExportRow& at(size_t index) const { return rows_[index]; }
  // Forgets the `count` oldest rows.
  void Drop(size_t count);

  std::vector<MissedRange> TakeGaps();
  // The stream's last sequence as last read; 0 before the first read.
  uint64_t head_sequence() const { return head_sequence_; }

 private:
  absl::Status ReadPage();
  // After a kRetentionGap: reads from the oldest retained event and
  // records what was missed after `after_sequence`.
  absl::StatusOr<ExportPage> ReadAcrossGap(uint64_t after_sequence);

  ExportSource& source_;
  const std::string stream_;
  std::optional<std::string> after_;
  const size_t page_limit_;
  std::deque<ExportRow> rows_;
  std::vector<MissedRange> gaps_;
  uint64_t head_sequence_ = 0;
  bool at_end_ = false;  // The last page reached the head.
};

}  // namespace keel::lakehouse

#endif  // KEEL_CMD_KEEL_EXPORT_ROW_QUEUE_H_
