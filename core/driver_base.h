// DriverBase: what every EventBus shares, whoever assigns the sequences.
//
// A driver that stores events itself does not derive from it: it writes a
// StreamLog and gets its bus from NewLogBus (core/log_bus.h), the storage
// engine, which derives from DriverBase. DriverBase is the documented base
// of an engine that sequences elsewhere (a server that orders a stream on
// its own, such as a JetStream cluster): such an engine feeds fanout() from
// the server's ordered feed.
//
// It validates and prepares publishes (core/publish_validation.h) against
// the stream's policy, tracks in-flight publishes so Close() can drain them,
// owns the FanOut that serves subscriptions, keeps stream declarations
// (core/policy_registry.h) and consumer groups in the driver's
// MetadataStore, and exposes the driver itself as the Replayer. A derived
// engine implements Append (assign sequences, honouring the AppendRequest
// with PlanAppend where it serializes the stream; persist; then deliver to
// fanout() in sequence order), Replay, Bounds, ListStreams and epoch(); it
// calls InitFanOut() once epoch() is valid, InitMetadata() when it persists
// metadata, and Close() in its destructor.
//
// Thread safety: all public methods are safe to call concurrently; Append is
// called concurrently for different and equal streams.
#ifndef KEEL_CORE_DRIVER_BASE_H_
#define KEEL_CORE_DRIVER_BASE_H_

#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "keel/core/append_plan.h"
#include "keel/core/driver_factory.h"
#include "keel/core/event_bus.h"
#include "keel/core/fanout.h"
#include "keel/core/metadata_store.h"
#include "keel/core/mutex.h"
#include "keel/core/publish_validation.h"
#include "keel/core/replayer.h"

namespace keel {

class GroupCoordinator;  // core/group_coordinator.h
class PolicyRegistry;    // core/policy_registry.h
class StreamDeleter;     // core/stream_deletion.h
class CollectionService;  // core/collection_service.h

class DriverBase : public EventBus, public Replayer {
 public:
  DriverBase(DriverContext context, PublishLimits limits);
  ~DriverBase() override;

  using EventBus::Publish;
  using EventBus::PublishBatch;
  absl::StatusOr<Receipt> Publish(Event event, const PublishOptions& options) final;
  absl::StatusOr<std::vector<Receipt>> PublishBatch(absl::string_view stream,
                                                    std::vector<Event> events,
                                                    const PublishOptions& options) final;
  void PublishBatchAsync(absl::string_view stream, std::vector<Event> events,
                         const PublishOptions& options, PublishDone done) final;
  bool PublishesAsync() const final { return AppendsAsync(); }
  absl::Status Declare(absl::string_view stream, const StreamPolicy& policy) override;
  absl::StatusOr<StreamPolicy> PolicyOf(absl::string_view stream) override;
  absl::StatusOr<std::vector<StreamDeclaration>> Declarations() override;
  // Runs TrimRetention like a publish: kClosed once Close began, and Close
  // waits for a trim in progress.
  absl::StatusOr<TrimReport> Trim(size_t budget) final;
  absl::StatusOr<std::unique_ptr<Subscription>> Subscribe(const SubscribeOptions& options) override;
  Replayer* replayer() override { return this; }
  ConsumerGroups* groups() override;
  // Null unless the driver called EnableCollections.
  Collections* collections() override;
  // Unimplemented unless DeletesStreams(); see core/stream_deletion.h.
  absl::StatusOr<DeletionReport> DeleteStream(absl::string_view stream) final;
  absl::Status Close(absl::Duration drain_timeout = absl::Seconds(10)) final;

 protected:
  // Stores `events` (validated, with stream, id and time set) as the next
  // sequences of `stream`, all or nothing, honouring `request` through
  // PlanAppend, then delivers the appended ones to fanout(). Publish times
  // must stay non-decreasing within a stream (raise an event's time to its
  // predecessor's when the clock stepped back).
  virtual absl::StatusOr<std::vector<Receipt>> Append(absl::string_view stream,
                                                      std::vector<Event> events,
                                                      const AppendRequest& request) = 0;
  // Append of a single event (EventBus::Publish). The default makes it a
  // batch of one; a driver overrides it when it can store one event
  // without the batch's vectors.
  virtual absl::StatusOr<Receipt> AppendOne(absl::string_view stream, Event event,
                                            const AppendRequest& request);
  // Append answered through `done` (see EventBus::PublishBatchAsync). The
  // default calls Append; a driver that overrides it so that it does not
  // wait for storage says so with AppendsAsync().
  virtual void AppendAsync(absl::string_view stream, std::vector<Event> events,
                           const AppendRequest& request, PublishDone done) {
    done(Append(stream, std::move(events), request));
  }
  virtual bool AppendsAsync() const { return false; }
  // EventBus::Trim for this driver (the default has nothing to trim).
  virtual absl::StatusOr<TrimReport> TrimRetention(size_t budget) {
    (void)budget;
    return TrimReport{};
  }
  // Whether DeleteEvents works; then InitMetadata also finishes deletions
  // a crash interrupted.
  virtual bool DeletesStreams() const { return false; }
  // Ends `stream`'s incarnation if it still starts at `incarnation_start`
  // (StreamInfo::incarnation_start) and has had events, then removes what
  // that left behind.
  virtual absl::Status DeleteEvents(absl::string_view stream, uint64_t incarnation_start) {
    (void)incarnation_start;
    return absl::UnimplementedError(absl::StrCat("cannot delete stream '", stream, "'"));
  }
  // Runs once in Close(), after in-flight publishes finished and
  // subscriptions were closed: release storage here.
  virtual absl::Status OnClose() { return absl::OkStatus(); }

  void InitFanOut();
  // Replaces the in-memory MetadataStore with the driver's persistent one
  // and loads its declarations. Call before the bus is shared.
  absl::Status InitMetadata(std::unique_ptr<MetadataStore> store);
  MetadataStore& metadata() { return *metadata_; }
  // Offers collections (core/collections.h) on metadata(): for an engine
  // whose appends store a CommitHook's records with their events. After
  // InitMetadata.
  void EnableCollections();
  const PolicyRegistry& policies() const { return *policies_; }
  // Adopts declarations another process stored in the metadata store (a
  // bus several daemons serve): one stream's, or every one.
  absl::Status RefreshDeclaration(absl::string_view stream);
  absl::Status RefreshDeclarations();
  FanOut& fanout() { return *fanout_; }
  const DriverContext& context() const { return context_; }
  const PublishLimits& limits() const { return limits_; }
  Receipt MakeReceipt(const Event& event) const;

 private:
  // Checks and prepares `events` for Append (PrepareForPublish under the
  // stream's policy): the request to append them with.
  absl::StatusOr<AppendRequest> PrepareAppend(absl::string_view stream, absl::Span<Event> events,
                                              const PublishOptions& options);
  std::unique_ptr<StreamDeleter> NewDeleter();
  // Publish of one event whose append runs `hook` at its commit point.
  absl::StatusOr<Receipt> PublishWithHook(Event event, CommitHook& hook);
  // Counts a publish or trim in flight; kClosed once Close began.
  absl::Status Enter();
  void Leave();

  const DriverContext context_;
  const PublishLimits limits_;
  std::unique_ptr<FanOut> fanout_;
  std::unique_ptr<MetadataStore> metadata_;
  std::unique_ptr<PolicyRegistry> policies_;
  // Consumer groups in metadata_, reading through this driver (as Replayer).
  std::unique_ptr<GroupCoordinator> groups_;
  std::unique_ptr<StreamDeleter> deleter_;  // Over metadata_ and policies_.
  std::unique_ptr<CollectionService> collections_;  // Over metadata_; null unless enabled.

  Mutex mu_;
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status close_status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace keel

#endif  // KEEL_CORE_DRIVER_BASE_H_
