#include "keel/cmd/keel/server/push/push_service.h"

#include <algorithm>
#include <boost/asio/ip/address.hpp>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/push/endpoint_url.h"
#include "keel/cmd/keel/server/push/push_metrics.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::push {
namespace {

bool IsLoopback(const std::string& host) {
  if (host == "localhost") return true;
  boost::system::error_code error;
  const boost::asio::ip::address address = boost::asio::ip::make_address(host, error);
  return !error && (address.is_loopback() || address.is_unspecified());
}

absl::Status UnknownSubscription(const std::string& name) {
  return NotFound(absl::StrCat("no push subscription named '", name, "'"));
}

}  // namespace

PushService::PushService(EventBus& bus, PushServiceOptions options, Logger& logger)
    : bus_(bus), options_(std::move(options)), logger_(logger), log_(bus) {}

PushService::~PushService() { Stop(); }

absl::Status PushService::Start() {
  KEEL_ASSIGN_OR_RETURN(auto stored, log_.Load());
  MutexLock lock(&mu_);
  started_ = true;
  for (auto& [name, subscription] : stored) {
    Entry& entry = entries_[name];
    entry.stored = std::move(subscription);
    entry.stats = std::make_shared<DeliveryStats>();
    StartWorker(entry);
  }
  return absl::OkStatus();
}

void PushService::Stop() {
  std::vector<std::unique_ptr<SubscriptionWorker>> workers;
  {
    MutexLock lock(&mu_);
    started_ = false;
    for (auto& [name, entry] : entries_) workers.push_back(std::move(entry.worker));
  }
  // Each waits for its POST in flight: stop them all first, then join.
  for (auto& worker : workers) {
    if (worker) worker->SetPaused(true);
  }
  workers.clear();
}

void PushService::StartWorker(Entry& entry) {
  entry.worker = std::make_unique<SubscriptionWorker>(
      bus_, entry.stored.subscription, entry.stored.paused, *entry.stats, options_.worker, logger_);
  if (entry.stored.redrive_until > 0) entry.worker->SetRedrive(entry.stored.redrive_until);
  entry.worker->Start();
}

void PushService::SetSelfAddress(std::string host, uint16_t port) {
  MutexLock lock(&mu_);
  self_host_ = std::move(host);
  self_port_ = port;
}

absl::Status PushService::CheckNotSelf(const PushSubscription& subscription) {
  if (subscription.allow_self || self_port_ == 0) return absl::OkStatus();
  KEEL_ASSIGN_OR_RETURN(EndpointUrl url, ParseEndpointUrl(subscription.endpoint));
  if (url.port == self_port_ && (IsLoopback(url.host) || url.host == self_host_)) {
    return InvalidArgument(
        "the endpoint is this daemon itself (it would deliver events to itself); set allowSelf "
        "to mean it");
  }
  return absl::OkStatus();
}

absl::Status PushService::SeekToStart(const PushSubscription& subscription) {
  ConsumerGroups* groups = bus_.groups();
  if (groups == nullptr) return absl::UnimplementedError("this driver keeps no consumer groups");
  KEEL_ASSIGN_OR_RETURN(std::vector<std::string> streams,
                        SubscriptionWorker::MatchingStreams(bus_, subscription));
  const Position start = subscription.start_at_latest ? Position::Latest() : Position::Earliest();
  for (const std::string& stream : streams) {
    KEEL_RETURN_IF_ERROR(groups->Seek(stream, subscription.GroupName(), start));
  }
  return absl::OkStatus();
}

absl::Status PushService::DeclareDeadLetterRetention(const PushSubscription& subscription) {
  if (subscription.dead_letter_retention.unbounded()) return absl::OkStatus();
  StreamPolicy policy;
  policy.dead_letter_retention = subscription.dead_letter_retention;
  absl::Status declared = bus_.Declare(subscription.DeadLetterSource(), policy);
  if (GetErrorKind(declared) == ErrorKind::kResourceDrift) {
    return ResourceDrift(absl::StrCat("deadLetterRetention: the stream ",
                                      subscription.DeadLetterSource(),
                                      " is declared with another policy: ", declared.message()));
  }
  return declared;
}

absl::StatusOr<PushService::Created> PushService::Create(PushSubscription subscription) {
  KEEL_RETURN_IF_ERROR(Validate(subscription));
  StoredSubscription stored;
  std::shared_ptr<DeliveryStats> stats;
  bool created = false;
  {
    MutexLock lock(&mu_);
    KEEL_RETURN_IF_ERROR(CheckNotSelf(subscription));
    auto it = entries_.find(subscription.name);
    if (it != entries_.end()) {
      const std::string drift = DriftBetween(it->second.stored.subscription, subscription);
      if (!drift.empty()) {
        return ResourceDrift(absl::StrCat("push subscription '", subscription.name,
                                          "' exists with other settings: ", drift));
      }
    } else {
      KEEL_RETURN_IF_ERROR(DeclareDeadLetterRetention(subscription));
      KEEL_RETURN_IF_ERROR(SeekToStart(subscription));
      Entry entry;
      entry.stored.subscription = std::move(subscription);
      entry.stats = std::make_shared<DeliveryStats>();
      KEEL_RETURN_IF_ERROR(log_.Put(entry.stored));
      it = entries_.emplace(entry.stored.subscription.name, std::move(entry)).first;
      if (started_) StartWorker(it->second);
      created = true;
    }
    stored = it->second.stored;
    stats = it->second.stats;
  }
  return Created{StatusOf(stored, *stats), created};
}

absl::StatusOr<SubscriptionStatus> PushService::Describe(const std::string& name) {
  StoredSubscription stored;
  std::shared_ptr<DeliveryStats> stats;
  {
    MutexLock lock(&mu_);
    auto it = entries_.find(name);
    if (it == entries_.end()) return UnknownSubscription(name);
    stored = it->second.stored;
    stats = it->second.stats;
  }
  return StatusOf(stored, *stats);
}

absl::StatusOr<std::vector<SubscriptionStatus>> PushService::List() {
  std::vector<std::pair<StoredSubscription, std::shared_ptr<DeliveryStats>>> all;
  {
    MutexLock lock(&mu_);
    for (const auto& [name, entry] : entries_) all.emplace_back(entry.stored, entry.stats);
  }
  std::vector<SubscriptionStatus> out;
  for (const auto& [stored, stats] : all) out.push_back(StatusOf(stored, *stats));
  return out;
}

absl::Status PushService::SetPaused(const std::string& name, bool paused) {
  MutexLock lock(&mu_);
  auto it = entries_.find(name);
  if (it == entries_.end()) return UnknownSubscription(name);
  if (it->second.stored.paused == paused) return absl::OkStatus();
  StoredSubscription next = it->second.stored;
  next.paused = paused;
  KEEL_RETURN_IF_ERROR(log_.Put(next));
  it->second.stored = std::move(next);
  if (it->second.worker) it->second.worker->SetPaused(paused);
  return absl::OkStatus();
}

absl::Status PushService::SetSecrets(const std::string& name, std::vector<std::string> secrets) {
  MutexLock lock(&mu_);
  auto it = entries_.find(name);
  if (it == entries_.end()) return UnknownSubscription(name);
  StoredSubscription next = it->second.stored;
  next.subscription.secrets = std::move(secrets);
  KEEL_RETURN_IF_ERROR(Validate(next.subscription));
  KEEL_RETURN_IF_ERROR(log_.Put(next));
  it->second.stored = std::move(next);
  if (it->second.worker) it->second.worker->SetSecrets(it->second.stored.subscription.secrets);
  return absl::OkStatus();
}

absl::Status PushService::Delete(const std::string& name) {
  std::unique_ptr<SubscriptionWorker> worker;
  std::shared_ptr<DeliveryStats> stats;  // Outlives the worker.
  {
    MutexLock lock(&mu_);
    auto it = entries_.find(name);
    if (it == entries_.end()) return UnknownSubscription(name);
    KEEL_RETURN_IF_ERROR(log_.Delete(name));
    worker = std::move(it->second.worker);
    stats = it->second.stats;
    entries_.erase(it);
  }
  worker.reset();  // Joins, outside mu_: its POST in flight may take a while.
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> PushService::PrepareRedrive(const PushSubscription& subscription,
                                                     RedriveRange range) {
  ConsumerGroups* groups = bus_.groups();
  Replayer* replayer = bus_.replayer();
  if (groups == nullptr || replayer == nullptr) {
    return absl::UnimplementedError("this driver keeps no consumer groups");
  }
  if (range.to != 0 && range.from > range.to) {
    return InvalidArgument("the redrive's fromSequence is after its toSequence");
  }
  const std::string dlq = subscription.DeadLetterStream();
  absl::StatusOr<StreamInfo> bounds = replayer->Bounds(dlq);
  if (GetErrorKind(bounds.status()) == ErrorKind::kNotFound) return 0;
  KEEL_RETURN_IF_ERROR(bounds.status());
  if (bounds->last_sequence == 0) return 0;
  const uint64_t until =
      range.to == 0 ? bounds->last_sequence : std::min(range.to, bounds->last_sequence);
  if (range.from == 0) return until;
  if (range.from > until) {
    return InvalidArgument(absl::StrCat("'", dlq, "' has no dead letters from ", range.from,
                                        " (its newest is ", bounds->last_sequence, ")"));
  }
  const std::string group = subscription.RedriveGroupName();
  absl::Status sought =
      range.from <= bounds->first_sequence
          ? groups->Seek(dlq, group, Position::Earliest())
          : groups->Seek(dlq, group,
                         Position::After(Cursor::For(dlq, replayer->epoch(), range.from - 1)));
  KEEL_RETURN_IF_ERROR(sought);
  return until;
}

absl::Status PushService::Redrive(const std::string& name, RedriveRange range) {
  MutexLock lock(&mu_);
  auto it = entries_.find(name);
  if (it == entries_.end()) return UnknownSubscription(name);
  Entry& entry = it->second;
  KEEL_ASSIGN_OR_RETURN(uint64_t until, PrepareRedrive(entry.stored.subscription, range));
  if (until == 0) return absl::OkStatus();  // No dead letters: nothing to redrive.
  StoredSubscription next = entry.stored;
  next.redrive_until = until;
  KEEL_RETURN_IF_ERROR(log_.Put(next));
  entry.stored = std::move(next);
  entry.stats->RedriveStarted();
  if (entry.worker) entry.worker->SetRedrive(until);
  return absl::OkStatus();
}

SubscriptionStatus PushService::StatusOf(const StoredSubscription& stored,
                                         const DeliveryStats& stats) {
  SubscriptionStatus status;
  status.subscription = stored.subscription;
  status.paused = stored.paused;
  status.counts = stats.Snapshot();
  status.redrive.until = stored.redrive_until;
  if (stored.redrive_until > 0 && bus_.groups() != nullptr) {
    absl::StatusOr<GroupInfo> redrive = bus_.groups()->Describe(
        stored.subscription.DeadLetterStream(), stored.subscription.RedriveGroupName());
    if (redrive.ok()) status.redrive.cursor = redrive->cursor.sequence;
  }
  absl::StatusOr<std::vector<std::string>> streams =
      SubscriptionWorker::MatchingStreams(bus_, stored.subscription);
  if (!streams.ok() || bus_.groups() == nullptr) return status;
  for (const std::string& stream : *streams) {
    StreamProgress progress{stream, "", 0};
    absl::StatusOr<GroupInfo> info =
        bus_.groups()->Describe(stream, stored.subscription.GroupName());
    if (info.ok()) {
      progress.lag = info->lag;
      if (info->cursor.sequence > 0) progress.cursor = info->cursor.Encode();
    } else if (absl::StatusOr<StreamInfo> bounds = bus_.replayer()->Bounds(stream); bounds.ok()) {
      progress.lag = bounds->count;  // Not consumed yet: it starts at the first event.
    }
    status.lag += progress.lag;
    status.streams.push_back(std::move(progress));
  }
  return status;
}

std::string PushService::MetricsText() {
  absl::StatusOr<std::vector<SubscriptionStatus>> all = List();
  return all.ok() ? PushMetricsText(*all) : "";
}

}  // namespace keel::push
