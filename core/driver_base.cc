#include "keel/core/driver_base.h"

#include "keel/core/collection_service.h"

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"
#include "keel/core/group_coordinator.h"
#include "keel/core/policy_registry.h"
#include "keel/core/status_macros.h"
#include "keel/core/stream_deletion.h"

namespace keel {

DriverBase::DriverBase(DriverContext context, PublishLimits limits)
    : context_(std::move(context)),
      limits_(limits),
      metadata_(NewInMemoryMetadataStore()),
      // An empty in-memory store always opens.
      policies_(*PolicyRegistry::Open(*metadata_, context_.default_policy)),
      groups_(std::make_unique<GroupCoordinator>(*metadata_, *this, *context_.clock)),
      deleter_(NewDeleter()) {}

DriverBase::~DriverBase() = default;

ConsumerGroups* DriverBase::groups() { return groups_.get(); }

Collections* DriverBase::collections() { return collections_.get(); }

void DriverBase::EnableCollections() {
  collections_ = std::make_unique<CollectionService>(
      *metadata_, *this, [this](Event event, CommitHook& hook) {
        return PublishWithHook(std::move(event), hook);
      });
}

absl::StatusOr<Receipt> DriverBase::PublishWithHook(Event event, CommitHook& hook) {
  KEEL_RETURN_IF_ERROR(Enter());
  absl::Cleanup leave = [this] { Leave(); };
  const std::string stream = event.stream;
  KEEL_ASSIGN_OR_RETURN(AppendRequest request,
                        PrepareAppend(stream, absl::MakeSpan(&event, 1), PublishOptions{}));
  request.hook = &hook;
  request.dedupe_window = absl::ZeroDuration();
  hook.Prepare(absl::MakeSpan(&event, 1));
  return AppendOne(stream, std::move(event), request);
}

void DriverBase::InitFanOut() { fanout_ = std::make_unique<FanOut>(this, context_.clock); }

absl::Status DriverBase::InitMetadata(std::unique_ptr<MetadataStore> store) {
  KEEL_ASSIGN_OR_RETURN(policies_, PolicyRegistry::Open(*store, context_.default_policy));
  groups_ = std::make_unique<GroupCoordinator>(*store, *this, *context_.clock);
  metadata_ = std::move(store);
  deleter_ = NewDeleter();
  return DeletesStreams() ? deleter_->ResumeAll() : absl::OkStatus();
}

std::unique_ptr<StreamDeleter> DriverBase::NewDeleter() {
  StreamDeleter::Hooks hooks{.bounds = [this](absl::string_view stream) { return Bounds(stream); },
                             .delete_events =
                                 [this](absl::string_view stream, uint64_t incarnation_start) {
                                   return DeleteEvents(stream, incarnation_start);
                                 }};
  return std::make_unique<StreamDeleter>(*metadata_, *policies_, std::move(hooks));
}

absl::StatusOr<DeletionReport> DriverBase::DeleteStream(absl::string_view stream) {
  KEEL_RETURN_IF_ERROR(ValidateStreamName(stream));
  if (!DeletesStreams()) return EventBus::DeleteStream(stream);
  KEEL_RETURN_IF_ERROR(Enter());
  absl::Cleanup leave = [this] { Leave(); };
  return deleter_->Delete(stream);
}

absl::Status DriverBase::RefreshDeclaration(absl::string_view stream) {
  return policies_->Refresh(stream);
}

absl::Status DriverBase::RefreshDeclarations() { return policies_->RefreshAll(); }

absl::Status DriverBase::Declare(absl::string_view stream, const StreamPolicy& policy) {
  return policies_->Declare(stream, policy);
}

absl::StatusOr<StreamPolicy> DriverBase::PolicyOf(absl::string_view stream) {
  KEEL_RETURN_IF_ERROR(ValidateStreamName(stream));
  return policies_->PolicyOf(stream);
}

absl::StatusOr<std::vector<StreamDeclaration>> DriverBase::Declarations() {
  return policies_->Declarations();
}

Receipt DriverBase::MakeReceipt(const Event& event) const {
  return Receipt{event.stream, event.sequence, Cursor::For(event.stream, epoch(), event.sequence),
                 event.id, false};
}

absl::StatusOr<Receipt> DriverBase::Publish(Event event, const PublishOptions& options) {
  KEEL_RETURN_IF_ERROR(Enter());
  absl::Cleanup leave = [this] { Leave(); };
  const std::string stream = event.stream;  // The event moves on; the name stays here.
  KEEL_ASSIGN_OR_RETURN(AppendRequest request,
                        PrepareAppend(stream, absl::MakeSpan(&event, 1), options));
  return AppendOne(stream, std::move(event), request);
}

absl::StatusOr<Receipt> DriverBase::AppendOne(absl::string_view stream, Event event,
                                              const AppendRequest& request) {
  std::vector<Event> events;
  events.push_back(std::move(event));
  KEEL_ASSIGN_OR_RETURN(std::vector<Receipt> receipts, Append(stream, std::move(events), request));
  return std::move(receipts.front());
}

absl::StatusOr<std::vector<Receipt>> DriverBase::PublishBatch(absl::string_view stream,
                                                              std::vector<Event> events,
                                                              const PublishOptions& options) {
  KEEL_RETURN_IF_ERROR(Enter());
  absl::Cleanup leave = [this] { Leave(); };
  KEEL_ASSIGN_OR_RETURN(AppendRequest request,
                        PrepareAppend(stream, absl::MakeSpan(events), options));
  return Append(stream, std::move(events), request);
}

void DriverBase::PublishBatchAsync(absl::string_view stream, std::vector<Event> events,
                                   const PublishOptions& options, PublishDone done) {
  if (absl::Status entered = Enter(); !entered.ok()) return done(entered);
  // In flight until answered: Close() waits for it like for a blocking one.
  // Until AppendAsync has taken `done`, an exception (a host's redactor,
  // say) must not leave it counted.
  absl::Cleanup leave = [this] { Leave(); };
  absl::StatusOr<AppendRequest> request = PrepareAppend(stream, absl::MakeSpan(events), options);
  if (!request.ok()) return done(request.status());
  AppendAsync(stream, std::move(events), *request,
              [this, done = std::move(done)](absl::StatusOr<std::vector<Receipt>> receipts) {
                Leave();
                done(std::move(receipts));
              });
  std::move(leave).Cancel();
}

absl::StatusOr<AppendRequest> DriverBase::PrepareAppend(absl::string_view stream,
                                                        absl::Span<Event> events,
                                                        const PublishOptions& options) {
  if (deleter_->Deleting(stream)) {
    return Unavailable(absl::StrCat("stream '", stream,
                                    "' is being deleted; delete it again to finish, then publish"));
  }
  const StreamPolicy policy = policies_->PolicyOf(stream);
  PublishLimits limits = limits_;
  limits.max_event_bytes = policy.max_payload_bytes;
  KEEL_RETURN_IF_ERROR(
      PrepareForPublish(stream, events, *context_.clock, context_.redactor.get(), limits));
  return AppendRequest{options.expected_last_sequence, policy.dedupe_window};
}

absl::StatusOr<TrimReport> DriverBase::Trim(size_t budget) {
  KEEL_RETURN_IF_ERROR(Enter());
  absl::Cleanup leave = [this] { Leave(); };
  return TrimRetention(budget);
}

absl::Status DriverBase::Enter() {
  MutexLock lock(&mu_);
  if (closing_) return Closed("the bus is closed");
  ++in_flight_;
  return absl::OkStatus();
}

void DriverBase::Leave() {
  MutexLock lock(&mu_);
  --in_flight_;
}

absl::StatusOr<std::unique_ptr<Subscription>> DriverBase::Subscribe(
    const SubscribeOptions& options) {
  return fanout_->Subscribe(options);
}

absl::Status DriverBase::Close(absl::Duration drain_timeout) {
  MutexLock lock(&mu_);
  if (closed_) return close_status_;
  closing_ = true;
  auto drained = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return in_flight_ == 0; };
  if (!mu_.AwaitWithTimeout(drained, drain_timeout)) {
    return Unavailable(absl::StrCat(in_flight_, " publishes still in flight after ",
                                    absl::FormatDuration(drain_timeout)));
  }
  closed_ = true;
  mu_.Unlock();
  if (fanout_) fanout_->CloseAll();
  absl::Status status = OnClose();
  if (fanout_) fanout_->Detach();
  mu_.Lock();
  close_status_ = status;
  return status;
}

}  // namespace keel
