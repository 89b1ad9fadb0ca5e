#include "keel/drivers/durable/trim.h"

#include "absl/strings/str_cat.h"
#include "keel/core/status_macros.h"

namespace keel::durable {

absl::StatusOr<TrimPlan> PlanTrim(StateStore& store, StoreFormat format,
                                  absl::string_view stream, const Head& head,
                                  const RetentionLimits& limits, absl::Time now, uint64_t budget) {
  TrimPlan plan;
  plan.from = plan.new_first = head.first;
  uint64_t count = head.count();
  uint64_t bytes = head.bytes;
  std::unique_ptr<StoreIterator> it = store.NewIterator(EntryRange(stream));
  for (it->Seek(EntryKey(stream, head.first)); it->Valid() && count > 0; it->Next()) {
    KEEL_ASSIGN_OR_RETURN(uint64_t seq, EntrySequence(it->key()));
    absl::StatusOr<Event> event = DecodeEntry(stream, seq, it->value(), format);
    if (!event.ok()) {
      return absl::DataLossError(
          absl::StrCat("key ", PrintableKey(it->key()), ": ", event.status().message()));
    }
    if (plan.events() == budget || !limits.Exceeded(count, bytes, event->time, now)) {
      plan.new_oldest = event->time;
      return plan;
    }
    const uint64_t size = event->ApproximateSize();
    plan.new_first = seq + 1;
    plan.bytes += size;
    bytes -= std::min(bytes, size);
    --count;
  }
  KEEL_RETURN_IF_ERROR(it->status());
  return plan;
}

absl::Status ApplyTrim(StateStore& store, StoreFormat format, WriteBatch& batch,
                       absl::string_view stream, const TrimPlan& plan, Head& head) {
  if (head.first != plan.from) {
    return absl::AbortedError(absl::StrCat("stream '", stream, "' was trimmed concurrently"));
  }
  // Into a copy, staged only once nothing can fail: a refused trim must
  // leave the group's batch and head as they were.
  Head trimmed = head;
  trimmed.first = plan.new_first;
  trimmed.bytes -= std::min(trimmed.bytes, plan.bytes);
  trimmed.oldest_time = plan.new_oldest;
  if (trimmed.count() > 0 && plan.new_oldest == absl::InfinitePast()) {
    // The plan emptied the stream as it was, but events were published since:
    // the oldest is now the first of those (already in the store).
    const std::string key = EntryKey(stream, trimmed.first);
    KEEL_ASSIGN_OR_RETURN(std::string value, store.Get(key));
    absl::StatusOr<Event> event = DecodeEntry(stream, trimmed.first, value, format);
    if (!event.ok()) {
      return absl::DataLossError(
          absl::StrCat("key ", PrintableKey(key), ": ", event.status().message()));
    }
    trimmed.oldest_time = event->time;
  }
  for (uint64_t seq = plan.from; seq < plan.new_first; ++seq) batch.Delete(EntryKey(stream, seq));
  head = trimmed;
  return absl::OkStatus();
}

}  // namespace keel::durable
