#include "keel/cmd/keel/export/row_queue.h"

#include <algorithm>
#include <utility>

#include "keel/core/cursor.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::lakehouse {

RowQueue::RowQueue(ExportSource& source, std::string stream, std::optional<std::string> after,
                   size_t page_limit)
    : source_(source),
      stream_(std::move(stream)),
      after_(std::move(after)),
      page_limit_(std::max<size_t>(page_limit, 1)) {}

absl::StatusOr<bool> RowQueue::Has(size_t index) {
  while (index >= rows_.size() && !at_end_) KEEL_RETURN_IF_ERROR(ReadPage());
  return index < rows_.size();
}

void RowQueue::Drop(size_t count) {
  rows_.erase(rows_.begin(), rows_.begin() + std::min(count, rows_.size()));
}

std::vector<MissedRange> RowQueue::TakeGaps() { return std::exchange(gaps_, {}); }

absl::Status RowQueue::ReadPage() {
  absl::StatusOr<ExportPage> page = source_.Read(stream_, after_, page_limit_);
  if (!page.ok() && GetErrorKind(page.status()) == ErrorKind::kRetentionGap && after_) {
    KEEL_ASSIGN_OR_RETURN(Cursor after, Cursor::Decode(*after_));
    page = ReadAcrossGap(after.sequence);
  }
  KEEL_RETURN_IF_ERROR(page.status());
  head_sequence_ = std::max(head_sequence_, page->head_sequence);
  at_end_ = page->reached_end || page->rows.empty();
  if (!page->rows.empty()) after_ = page->rows.back().cursor;
  for (ExportRow& row : page->rows) rows_.push_back(std::move(row));
  return absl::OkStatus();
}

absl::StatusOr<ExportPage> RowQueue::ReadAcrossGap(uint64_t after_sequence) {
  KEEL_ASSIGN_OR_RETURN(ExportPage page, source_.Read(stream_, std::nullopt, page_limit_));
  const uint64_t resumed_at =
      page.rows.empty() ? page.head_sequence + 1 : page.rows.front().sequence;
  if (resumed_at > after_sequence + 1) gaps_.push_back({after_sequence + 1, resumed_at - 1});
  return page;
}

}  // namespace keel::lakehouse
