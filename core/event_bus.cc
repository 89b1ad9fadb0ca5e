#include "keel/core/event_bus.h"

#include "absl/strings/str_cat.h"

namespace keel {

void EventBus::PublishBatchAsync(absl::string_view stream, std::vector<Event> events,
                                 const PublishOptions& options, PublishDone done) {
  done(PublishBatch(stream, std::move(events), options));
}

// Defaults for drivers that keep no declarations: every stream runs on the
// default policy, and nothing ever needs trimming.
absl::Status EventBus::Declare(absl::string_view stream, const StreamPolicy& policy) {
  (void)policy;
  return absl::UnimplementedError(
      absl::StrCat("this driver does not support stream declarations (stream '", stream, "')"));
}

absl::StatusOr<StreamPolicy> EventBus::PolicyOf(absl::string_view stream) {
  (void)stream;
  return StreamPolicy{};
}

absl::StatusOr<std::vector<StreamDeclaration>> EventBus::Declarations() {
  return std::vector<StreamDeclaration>{};
}

absl::StatusOr<DeletionReport> EventBus::DeleteStream(absl::string_view stream) {
  return absl::UnimplementedError(
      absl::StrCat("this driver cannot delete streams (stream '", stream, "')"));
}

absl::StatusOr<TrimReport> EventBus::Trim(size_t budget) {
  (void)budget;
  return TrimReport{};
}

}  // namespace keel
