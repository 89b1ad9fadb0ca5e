#include "keel/drivers/durable/tiering_bus.h"

#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::durable {

RetentionLimits TieringBus::HotOf(absl::string_view stream) const {
  absl::StatusOr<StreamPolicy> policy = bus_->PolicyOf(stream);
  return policy.ok() ? policy->hot : RetentionLimits{};
}

absl::StatusOr<TrimReport> TieringBus::Trim(size_t budget) {
  KEEL_ASSIGN_OR_RETURN(TrimReport report, ForwardingBus::Trim(budget));
  absl::StatusOr<TierReport> tiered =
      log_->Tier([this](absl::string_view stream) { return HotOf(stream); }, clock_->Now(), budget);
  if (!tiered.ok()) {
    const absl::Status& status = tiered.status();
    const bool store_down = status.code() == absl::StatusCode::kUnavailable ||
                            GetErrorKind(status) == ErrorKind::kUnavailable;
    if (store_down) return report;  // Paused: warned and counted by the tier.
    return status;
  }
  report.more = report.more || tiered->more;
  return report;
}

bool TieringBus::NeedsTrim() const {
  if (ForwardingBus::NeedsTrim()) return true;
  return log_->NeedsTier([this](absl::string_view stream) { return HotOf(stream); }, clock_->Now());
}

}  // namespace keel::durable
