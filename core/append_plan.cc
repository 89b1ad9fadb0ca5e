#include "keel/core/append_plan.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"

namespace keel {

absl::StatusOr<AppendPlan> PlanAppend(absl::Span<const Event> events, const AppendRequest& request,
                                      uint64_t last_sequence, DedupeLookup lookup) {
  AppendPlan plan;
  plan.earlier.resize(events.size());
  plan.same_batch.resize(events.size());
  const bool dedupe = request.dedupe_window > absl::ZeroDuration();
  absl::flat_hash_map<absl::string_view, size_t> first_of_key;
  for (size_t i = 0; i < events.size(); ++i) {
    const std::optional<std::string>& key = events[i].idempotency_key;
    if (dedupe && key) {
      if (auto it = first_of_key.find(*key); it != first_of_key.end()) {
        plan.same_batch[i] = it->second;
        continue;
      }
      if ((plan.earlier[i] = lookup(*key))) continue;
      first_of_key.emplace(*key, i);
    }
    plan.append.push_back(i);
  }
  if (!plan.append.empty() && request.expected_last_sequence &&
      *request.expected_last_sequence != last_sequence) {
    return ConflictError(absl::StrCat("expected last sequence ", *request.expected_last_sequence,
                                      ", but the stream's last sequence is ", last_sequence),
                         ConflictInfo{*request.expected_last_sequence, last_sequence});
  }
  return plan;
}

void ForEachPlannedReceipt(const AppendPlan& plan, absl::Span<const Event> events,
                           absl::string_view stream, uint64_t epoch,
                           absl::FunctionRef<void(Receipt)> take) {
  auto receipt = [&](uint64_t sequence, const std::string& id, bool duplicate) {
    return Receipt{std::string(stream), sequence, Cursor::For(stream, epoch, sequence), id,
                   duplicate};
  };
  for (size_t i = 0; i < events.size(); ++i) {
    if (plan.earlier[i]) {
      take(receipt(plan.earlier[i]->sequence, plan.earlier[i]->id, true));
    } else if (plan.same_batch[i]) {
      const Event& first = events[*plan.same_batch[i]];
      take(receipt(first.sequence, first.id, true));
    } else {
      take(receipt(events[i].sequence, events[i].id, false));
    }
  }
}

std::vector<Receipt> PlannedReceipts(const AppendPlan& plan, absl::Span<const Event> events,
                                     absl::string_view stream, uint64_t epoch) {
  std::vector<Receipt> receipts;
  receipts.reserve(events.size());
  ForEachPlannedReceipt(plan, events, stream, epoch,
                        [&](Receipt receipt) { receipts.push_back(std::move(receipt)); });
  return receipts;
}

}  // namespace keel
