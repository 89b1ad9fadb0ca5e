#include "keel/drivers/durable/cold_index.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "keel/core/status_macros.h"
#include "keel/drivers/durable/key_layout.h"

namespace keel::durable {

ColdIndex::ColdIndex(StateStore& store, absl::flat_hash_map<std::string, ColdSummary> summaries)
    : store_(store), summaries_(std::move(summaries)) {}

ColdSummary ColdIndex::SummaryOf(absl::string_view stream) const {
  ReaderMutexLock lock(&mu_);
  auto it = summaries_.find(stream);
  return it == summaries_.end() ? ColdSummary{} : it->second;
}

std::vector<std::string> ColdIndex::Streams() const {
  ReaderMutexLock lock(&mu_);
  std::vector<std::string> streams;
  for (const auto& [stream, summary] : summaries_) {
    if (!summary.empty()) streams.push_back(stream);
  }
  return streams;
}

uint64_t ColdIndex::TotalSegments() const {
  ReaderMutexLock lock(&mu_);
  uint64_t total = 0;
  for (const auto& [stream, summary] : summaries_) total += summary.segments;
  return total;
}

uint64_t ColdIndex::TotalObjectBytes() const {
  ReaderMutexLock lock(&mu_);
  uint64_t total = 0;
  for (const auto& [stream, summary] : summaries_) total += summary.object_bytes;
  return total;
}

absl::StatusOr<std::shared_ptr<const ColdSegments>> ColdIndex::SegmentsOf(
    absl::string_view stream) {
  {
    ReaderMutexLock lock(&mu_);
    if (auto it = loaded_.find(stream); it != loaded_.end()) return it->second;
    auto summary = summaries_.find(stream);
    if (summary == summaries_.end() || summary->second.empty()) {
      static const auto* none =
          new std::shared_ptr<const ColdSegments>(std::make_shared<const ColdSegments>());
      return *none;
    }
  }
  ColdSegments segments;
  std::unique_ptr<StoreIterator> it = store_.NewIterator(ColdSegmentRange(stream));
  for (it->Seek(ColdSegmentRange(stream).start); it->Valid(); it->Next()) {
    KEEL_ASSIGN_OR_RETURN(ColdSegment segment, DecodeColdSegment(it->key(), it->value()));
    if (!segments.empty() && segment.first != segments.back().last + 1) {
      return absl::DataLossError(absl::StrCat(
          "stream '", stream, "': cold segments are not contiguous: ", segments.back().object,
          " ends at ", segments.back().last, ", ", segment.object, " starts at ", segment.first));
    }
    segments.push_back(std::move(segment));
  }
  KEEL_RETURN_IF_ERROR(it->status());
  const ColdSummary found = Summarize(segments);
  MutexLock lock(&mu_);
  if (auto again = loaded_.find(stream); again != loaded_.end()) return again->second;
  if (found != summaries_[stream]) {
    return absl::DataLossError(absl::StrCat(
        "stream '", stream, "': the cold summary record (", summaries_[stream].segments,
        " segments) disagrees with the segment records (", found.segments, ")"));
  }
  auto shared = std::make_shared<const ColdSegments>(std::move(segments));
  loaded_[stream] = shared;
  return shared;
}

void ColdIndex::Install(absl::string_view stream, ColdSegments segments) {
  const ColdSummary summary = Summarize(segments);
  auto shared = std::make_shared<const ColdSegments>(std::move(segments));
  MutexLock lock(&mu_);
  summaries_[stream] = summary;
  loaded_[stream] = std::move(shared);
}

ColdSummary ColdIndex::Summarize(const ColdSegments& segments) {
  ColdSummary summary;
  if (segments.empty()) return summary;
  summary.first = segments.front().first;
  summary.oldest_time = segments.front().min_time;
  for (const ColdSegment& segment : segments) {
    ++summary.segments;
    summary.object_bytes += segment.object_bytes;
    summary.event_bytes += segment.event_bytes;
  }
  return summary;
}

}  // namespace keel::durable
