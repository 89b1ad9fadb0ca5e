#include "keel/core/log_bus.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "keel/core/dedupe_table.h"
#include "keel/core/driver_base.h"
#include "keel/core/errors.h"
#include "keel/core/group_commit.h"
#include "keel/core/log_trim.h"
#include "keel/core/policy_registry.h"
#include "keel/core/status_macros.h"

namespace keel {
namespace {

// What the committer is asked to do; each kind is its own struct below.
enum class OpKind { kAppend, kTrim, kCollectKeys, kDelete, kSweep };

struct Op : QueuedCommit {
  explicit Op(OpKind kind) : kind(kind) {}
  const OpKind kind;
  // Set by the commit when this member alone is refused (a conflict, a
  // trim that lost a race); it then stored nothing.
  absl::Status rejected;
};

// Inline room for one event and its receipt: a single-event publish
// (AppendOne) allocates no vector of its own.
using Events = absl::InlinedVector<Event, 1>;
using Receipts = absl::InlinedVector<Receipt, 1>;

struct AppendOp : Op {
  AppendOp(absl::string_view stream, std::vector<Event> batch, const AppendRequest& request)
      : Op(OpKind::kAppend), stream(stream), request(request) {
    events.reserve(batch.size());
    for (Event& event : batch) events.push_back(std::move(event));
    CountBytes();
  }
  AppendOp(absl::string_view stream, Event event, const AppendRequest& request)
      : Op(OpKind::kAppend), stream(stream), request(request) {
    events.push_back(std::move(event));
    CountBytes();
  }
  void CountBytes() {
    for (const Event& event : events) bytes += event.ApproximateSize();
  }
  std::string stream;
  Events events;  // After the commit: only the appended ones.
  AppendRequest request;
  std::unique_ptr<PreparedRecords> prepared;
  std::vector<LogKey> keys;  // Filled by the commit.
  std::vector<LogRecord> records;  // Filled by request.hook at the commit.
  Receipts receipts;         // Filled by the commit.
};

struct TrimOp : Op {
  TrimOp(absl::string_view stream, const LogTrim& cut)
      : Op(OpKind::kTrim), stream(stream), cut(cut) {}
  absl::string_view stream;
  LogTrim cut;
};

struct CollectKeysOp : Op {
  explicit CollectKeysOp(size_t budget) : Op(OpKind::kCollectKeys), budget(budget) {}
  size_t budget;
  KeyCollection collected;
};

// Ends a stream's incarnation if it still starts at `incarnation_start` (a
// resumed deletion whose events are gone leaves the new incarnation alone).
struct DeleteOp : Op {
  DeleteOp(absl::string_view stream, uint64_t incarnation_start)
      : Op(OpKind::kDelete), stream(stream), incarnation_start(incarnation_start) {}
  absl::string_view stream;
  uint64_t incarnation_start;
};

// Removes up to `budget` records a deletion left behind.
struct SweepOp : Op {
  SweepOp(absl::string_view stream, size_t budget)
      : Op(OpKind::kSweep), stream(stream), budget(budget) {}
  absl::string_view stream;
  size_t budget;
  bool more = false;
};

// Reads a replay page, decoding in place, and checks that the sequences
// the log returns follow each other.
class PageSink final : public ReadSink {
 public:
  PageSink(ReplayPage& page, const ReplayRequest& request, uint64_t after)
      : page_(page), request_(request), scanned_(after) {}

  Event& Slot() override { return page_.events.emplace_back(); }
  bool Take() override {
    const uint64_t sequence = page_.events.back().sequence;
    if (sequence != scanned_ + 1 && hole_ == 0) hole_ = scanned_ + 1;
    scanned_ = sequence;
    if (!request_.filter.Matches(page_.events.back())) page_.events.pop_back();
    return page_.events.size() < request_.limit;
  }

  uint64_t scanned() const { return scanned_; }
  // The first sequence the log skipped, or 0.
  uint64_t hole() const { return hole_; }

 private:
  ReplayPage& page_;
  const ReplayRequest& request_;
  uint64_t scanned_;
  uint64_t hole_ = 0;
};

// Reads one event's time (the newest, to keep times non-decreasing).
class TimeSink final : public ReadSink {
 public:
  Event& Slot() override { return event_; }
  bool Take() override {
    found_ = true;
    return false;
  }
  std::optional<absl::Time> time() const {
    return found_ ? std::optional<absl::Time>(event_.time) : std::nullopt;
  }

 private:
  Event event_;
  bool found_ = false;
};

std::string KeyOf(absl::string_view stream, absl::string_view key) {
  return absl::StrCat(stream, absl::string_view("\0", 1), key);
}

class LogBus final : public DriverBase {
 public:
  LogBus(std::unique_ptr<StreamLog> log, const DriverContext& context, const LogBusOptions& options,
         absl::Time next_key_expiry)
      : DriverBase(context, PublishLimits{}),
        log_(std::move(log)),
        epoch_(log_->epoch()),
        next_key_expiry_(absl::ToUnixNanos(next_key_expiry)),
        committer_(options.max_group_bytes,
                   [this](absl::Span<QueuedCommit* const> group) { return Commit(group); }) {
    InitFanOut();
  }
  ~LogBus() override { Close().IgnoreError(); }

  absl::Status InitMetadataFromLog() {
    std::unique_ptr<MetadataStore> store = log_->TakeMetadataStore();
    if (store == nullptr) return absl::OkStatus();
    KEEL_RETURN_IF_ERROR(InitMetadata(std::move(store)));
    if (log_->StoresRecords()) EnableCollections();
    return absl::OkStatus();
  }

  absl::StatusOr<ReplayPage> Replay(const ReplayRequest& request) override;
  absl::StatusOr<StreamInfo> Bounds(absl::string_view stream) override;
  absl::StatusOr<std::vector<StreamInfo>> ListStreams(absl::string_view prefix,
                                                      size_t limit) override;
  uint64_t epoch() const override { return epoch_; }
  bool NeedsTrim() const override;
  std::string DegradedReason() const override { return log_->DegradedReason(); }

 protected:
  absl::StatusOr<std::vector<Receipt>> Append(absl::string_view stream, std::vector<Event> events,
                                              const AppendRequest& request) override;
  absl::StatusOr<Receipt> AppendOne(absl::string_view stream, Event event,
                                    const AppendRequest& request) override;
  void AppendAsync(absl::string_view stream, std::vector<Event> events,
                   const AppendRequest& request, PublishDone done) override;
  bool AppendsAsync() const override { return log_->AppendsMayBlock(); }
  absl::StatusOr<TrimReport> TrimRetention(size_t budget) override;
  absl::Status OnClose() override { return log_->Close(); }
  bool DeletesStreams() const override { return log_->DeletesStreams(); }
  absl::Status DeleteEvents(absl::string_view stream, uint64_t incarnation_start) override;

 private:
  // What one commit group has staged so far, per stream. One is reused by
  // every commit (cleared, it keeps its memory): a commit allocates nothing
  // for its bookkeeping.
  struct GroupStage {
    void Clear() {
      bounds.clear();
      last_time.clear();
      keys.clear();
      appended.clear();
      parts.clear();
    }
    absl::flat_hash_map<absl::string_view, LogBounds> bounds;
    absl::flat_hash_map<absl::string_view, absl::Time> last_time;
    absl::flat_hash_map<std::string, DedupeHit> keys;  // KeyOf(stream, key).
    std::vector<AppendOp*> appended;
    std::vector<LogAppend> parts;  // What goes to StreamLog::Append.
  };

  static absl::StatusOr<std::vector<Receipt>> Outcome(AppendOp& op, absl::Status status);
  static std::vector<Receipt> TakeReceipts(AppendOp& op);
  absl::Status Submit(AppendOp& op);
  absl::Status Commit(absl::Span<QueuedCommit* const> group);
  absl::Status CommitAppends(GroupStage& stage);
  void ApplyMaintenance(Op& op);
  absl::Status ApplyDelete(const DeleteOp& op);
  absl::Status StageAppend(GroupStage& stage, AppendOp& op);
  // Runs op.request.hook and accounts for the bytes it changed.
  static absl::StatusOr<StagedEvents> StageHook(AppendOp& op, LogBounds& bounds);
  absl::StatusOr<LogBounds*> StagedBounds(GroupStage& stage, absl::string_view stream);
  absl::StatusOr<absl::Time*> StagedLastTime(GroupStage& stage, absl::string_view stream,
                                             const LogBounds& bounds);
  std::optional<DedupeHit> FindKey(GroupStage& stage, absl::string_view stream,
                                   absl::string_view key, absl::Time now, absl::Status& error);
  void Remember(AppendOp& op, const AppendPlan& plan, GroupStage& stage);
  void LowerKeyExpiry(absl::Time expiry);
  KeyCollection CollectTableKeys(absl::Time now, size_t budget);
  absl::Status TrimStream(absl::string_view stream, const LogBounds& bounds,
                          const RetentionLimits& limits, absl::Time now, uint64_t budget,
                          TrimReport& report);
  StreamInfo InfoOf(absl::string_view stream, const LogBounds& bounds) const;
  absl::Status ExplainHole(const ReplayRequest& request, uint64_t after, uint64_t hole);

  const std::unique_ptr<StreamLog> log_;
  const uint64_t epoch_;
  // Unix nanos of the earliest idempotency-key expiry (NeedsTrim).
  std::atomic<int64_t> next_key_expiry_;
  // Committing thread only: the newest event's time per stream, loaded on
  // first use, so that times stay non-decreasing within a stream.
  absl::flat_hash_map<std::string, absl::Time> last_time_;
  // Committing thread only: the keys of a log that does not keep them.
  absl::flat_hash_map<std::string, DedupeTable> tables_;
  GroupStage stage_;          // Committing thread only.
  GroupCommitter committer_;  // Last: its thread stops before the rest goes.
};

absl::StatusOr<std::vector<Receipt>> LogBus::Append(absl::string_view stream,
                                                    std::vector<Event> events,
                                                    const AppendRequest& request) {
  AppendOp op(stream, std::move(events), request);
  KEEL_RETURN_IF_ERROR(Submit(op));
  return TakeReceipts(op);
}

absl::StatusOr<Receipt> LogBus::AppendOne(absl::string_view stream, Event event,
                                          const AppendRequest& request) {
  AppendOp op(stream, std::move(event), request);
  KEEL_RETURN_IF_ERROR(Submit(op));
  return std::move(op.receipts.front());
}

// Encodes on the publisher's thread, then waits for the group's commit;
// the op's own refusal (a conflict, say) wins over the group's status.
absl::Status LogBus::Submit(AppendOp& op) {
  op.prepared = log_->Prepare(op.events);
  absl::Status status = committer_.Submit(op);
  KEEL_RETURN_IF_ERROR(op.rejected);
  return status;
}

void LogBus::AppendAsync(absl::string_view stream, std::vector<Event> events,
                         const AppendRequest& request, PublishDone done) {
  if (!log_->AppendsMayBlock()) return done(Append(stream, std::move(events), request));
  auto op = std::make_unique<AppendOp>(stream, std::move(events), request);
  op->prepared = log_->Prepare(op->events);
  AppendOp* queued = op.release();  // Freed by `done` below, once committed.
  queued->done = [queued, done = std::move(done)](absl::Status status) {
    std::unique_ptr<AppendOp> op(queued);
    done(Outcome(*op, std::move(status)));
  };
  committer_.SubmitAsync(*queued);
}

absl::StatusOr<std::vector<Receipt>> LogBus::Outcome(AppendOp& op, absl::Status status) {
  KEEL_RETURN_IF_ERROR(op.rejected);
  KEEL_RETURN_IF_ERROR(status);
  return TakeReceipts(op);
}

std::vector<Receipt> LogBus::TakeReceipts(AppendOp& op) {
  return std::vector<Receipt>(std::make_move_iterator(op.receipts.begin()),
                              std::make_move_iterator(op.receipts.end()));
}

absl::Status LogBus::Commit(absl::Span<QueuedCommit* const> group) {
  // Maintenance first: a key collected and published again in one group
  // stays, and a trim planned before this group's appends cuts only what
  // it planned.
  GroupStage& stage = stage_;
  stage.Clear();
  for (QueuedCommit* member : group) {
    Op& op = static_cast<Op&>(*member);
    if (op.kind != OpKind::kAppend) ApplyMaintenance(op);
  }
  for (QueuedCommit* member : group) {
    Op& op = static_cast<Op&>(*member);
    if (op.kind != OpKind::kAppend) continue;
    AppendOp& append = static_cast<AppendOp&>(op);
    append.rejected = StageAppend(stage, append);
    if (append.rejected.ok()) stage.appended.push_back(&append);
  }
  return CommitAppends(stage);
}

void LogBus::ApplyMaintenance(Op& op) {
  if (op.kind == OpKind::kTrim) {
    TrimOp& trim = static_cast<TrimOp&>(op);
    trim.rejected = log_->TrimPrefix(trim.stream, trim.cut);
    return;
  }
  if (op.kind == OpKind::kDelete) {
    op.rejected = ApplyDelete(static_cast<DeleteOp&>(op));
    return;
  }
  if (op.kind == OpKind::kSweep) {
    SweepOp& sweep = static_cast<SweepOp&>(op);
    absl::StatusOr<bool> more = log_->SweepDeleted(sweep.stream, sweep.budget);
    sweep.rejected = more.status();
    sweep.more = more.value_or(false);
    return;
  }
  CollectKeysOp& collect = static_cast<CollectKeysOp&>(op);
  const absl::Time now = context().clock->Now();
  if (!log_->KeepsKeys()) {
    collect.collected = CollectTableKeys(now, collect.budget);
  } else if (absl::StatusOr<KeyCollection> collected = log_->CollectKeys(now, collect.budget);
             collected.ok()) {
    collect.collected = *collected;
  } else {
    collect.rejected = collected.status();
    return;
  }
  next_key_expiry_.store(absl::ToUnixNanos(collect.collected.next_expiry));
}

absl::Status LogBus::ApplyDelete(const DeleteOp& op) {
  KEEL_ASSIGN_OR_RETURN(LogBounds bounds, log_->Bounds(op.stream));
  if (bounds.incarnation_start != op.incarnation_start || bounds.last() <= bounds.incarnation_start)
    return absl::OkStatus();
  KEEL_RETURN_IF_ERROR(log_->DeleteStream(op.stream));
  // The next incarnation starts with no time to follow and no keys.
  last_time_.erase(op.stream);
  tables_.erase(op.stream);
  return absl::OkStatus();
}

absl::Status LogBus::DeleteEvents(absl::string_view stream, uint64_t incarnation_start) {
  DeleteOp deletion(stream, incarnation_start);
  KEEL_RETURN_IF_ERROR(committer_.Submit(deletion));
  KEEL_RETURN_IF_ERROR(deletion.rejected);
  // A bounded piece per commit, so that publishes go on between them.
  constexpr size_t kSweepBudget = 4096;
  for (;;) {
    SweepOp sweep(stream, kSweepBudget);
    KEEL_RETURN_IF_ERROR(committer_.Submit(sweep));
    KEEL_RETURN_IF_ERROR(sweep.rejected);
    if (!sweep.more) return absl::OkStatus();
  }
}

absl::Status LogBus::CommitAppends(GroupStage& stage) {
  if (stage.appended.empty()) return absl::OkStatus();
  std::vector<LogAppend>& parts = stage.parts;
  for (AppendOp* op : stage.appended) {
    parts.push_back(LogAppend{op->stream, op->events, op->keys, op->prepared.get(), op->records});
  }
  const absl::Status status = log_->Append(parts);
  for (AppendOp* op : stage.appended) {
    if (op->request.hook != nullptr) op->request.hook->Done(status.ok());
  }
  if (!status.ok()) {
    for (AppendOp* op : stage.appended) {
      for (Event& event : op->events) event.sequence = 0;
    }
    return status;
  }
  for (const auto& [stream, time] : stage.last_time) {
    last_time_.insert_or_assign(std::string(stream), time);
  }
  if (!log_->KeepsKeys()) {
    for (AppendOp* op : stage.appended) {
      if (op->keys.empty()) continue;
      DedupeTable& table = tables_[op->stream];
      for (const LogKey& key : op->keys) table.Remember(std::string(key.key), key.hit, key.expires);
    }
  }
  // Still the only committer: deliveries leave in sequence order per stream.
  for (AppendOp* op : stage.appended) fanout().Deliver(op->stream, op->events);
  return absl::OkStatus();
}

absl::StatusOr<LogBounds*> LogBus::StagedBounds(GroupStage& stage, absl::string_view stream) {
  if (auto it = stage.bounds.find(stream); it != stage.bounds.end()) return &it->second;
  KEEL_ASSIGN_OR_RETURN(LogBounds bounds, log_->Bounds(stream));
  return &stage.bounds.emplace(stream, bounds).first->second;
}

absl::StatusOr<absl::Time*> LogBus::StagedLastTime(GroupStage& stage, absl::string_view stream,
                                                   const LogBounds& bounds) {
  if (auto it = stage.last_time.find(stream); it != stage.last_time.end()) return &it->second;
  absl::Time last = absl::InfinitePast();
  if (auto it = last_time_.find(stream); it != last_time_.end()) {
    last = it->second;
  } else if (bounds.count() > 0) {
    TimeSink newest;
    KEEL_RETURN_IF_ERROR(log_->Read(stream, bounds.last(), bounds.last(), newest));
    if (!newest.time()) {
      return absl::DataLossError(
          absl::StrCat("stream '", stream, "': event ", bounds.last(), " is missing from the log"));
    }
    last = *newest.time();
  }
  return &stage.last_time.emplace(stream, last).first->second;
}

std::optional<DedupeHit> LogBus::FindKey(GroupStage& stage, absl::string_view stream,
                                         absl::string_view key, absl::Time now,
                                         absl::Status& error) {
  if (auto it = stage.keys.find(KeyOf(stream, key)); it != stage.keys.end()) return it->second;
  if (!log_->KeepsKeys()) {
    auto table = tables_.find(stream);
    return table == tables_.end() ? std::nullopt : table->second.Find(key, now);
  }
  absl::StatusOr<std::optional<DedupeHit>> hit = log_->FindKey(stream, key, now);
  if (!hit.ok()) {
    error.Update(hit.status());
    return std::nullopt;
  }
  return *hit;
}

absl::Status LogBus::StageAppend(GroupStage& stage, AppendOp& op) {
  KEEL_ASSIGN_OR_RETURN(LogBounds * staged, StagedBounds(stage, op.stream));
  LogBounds bounds = *staged;
  const absl::Time now = context().clock->Now();
  absl::Status lookup_error;
  KEEL_ASSIGN_OR_RETURN(
      AppendPlan plan, PlanAppend(op.events, op.request, bounds.last(), [&](absl::string_view key) {
        return FindKey(stage, op.stream, key, now, lookup_error);
      }));
  KEEL_RETURN_IF_ERROR(lookup_error);
  KEEL_ASSIGN_OR_RETURN(absl::Time * last_time, StagedLastTime(stage, op.stream, bounds));
  bool as_prepared = plan.append.size() == op.events.size();
  for (size_t i : plan.append) {
    Event& event = op.events[i];
    if (event.time < *last_time) {
      // The clock stepped back, or a publisher stamped earlier was queued
      // later: keep times non-decreasing within the stream.
      event.time = *last_time;
      as_prepared = false;
    }
    *last_time = event.time;
    if (bounds.count() == 0) bounds.oldest_time = event.time;
    event.sequence = bounds.next++;
    bounds.bytes += event.ApproximateSize();
  }
  if (op.request.hook != nullptr) {
    // The hook completes the events it is given whole (collections publish
    // no idempotency keys, so none was dropped).
    KEEL_ASSIGN_OR_RETURN(StagedEvents staged_events, StageHook(op, bounds));
    if (staged_events == StagedEvents::kRewritten) as_prepared = false;
  }
  op.receipts.clear();
  ForEachPlannedReceipt(plan, op.events, op.stream, epoch_,
                        [&](Receipt receipt) { op.receipts.push_back(std::move(receipt)); });
  if (!as_prepared) op.prepared.reset();
  Remember(op, plan, stage);
  *staged = bounds;
  return absl::OkStatus();
}

absl::StatusOr<StagedEvents> LogBus::StageHook(AppendOp& op, LogBounds& bounds) {
  uint64_t before = 0;
  for (const Event& event : op.events) before += event.ApproximateSize();
  op.records.clear();
  KEEL_ASSIGN_OR_RETURN(
      StagedEvents staged,
      op.request.hook->Stage(absl::MakeSpan(op.events.data(), op.events.size()),
                             bounds.incarnation_start, op.records));
  uint64_t after = 0;
  for (const Event& event : op.events) after += event.ApproximateSize();
  bounds.bytes = bounds.bytes - before + after;
  return staged;
}

// Keeps only the appended events, and lists the keys to remember with them.
void LogBus::Remember(AppendOp& op, const AppendPlan& plan, GroupStage& stage) {
  if (plan.append.size() != op.events.size()) {
    Events appended;
    appended.reserve(plan.append.size());
    for (size_t i : plan.append) appended.push_back(std::move(op.events[i]));
    op.events = std::move(appended);
  }
  if (op.request.dedupe_window <= absl::ZeroDuration()) return;
  for (const Event& event : op.events) {
    if (!event.idempotency_key) continue;
    const DedupeHit hit{event.sequence, event.id};
    const absl::Time expires = event.time + op.request.dedupe_window;
    op.keys.push_back(LogKey{*event.idempotency_key, hit, expires});
    stage.keys.emplace(KeyOf(op.stream, *event.idempotency_key), hit);
    LowerKeyExpiry(expires);
  }
}

void LogBus::LowerKeyExpiry(absl::Time expiry) {
  const int64_t nanos = absl::ToUnixNanos(expiry);
  int64_t current = next_key_expiry_.load();
  while (nanos < current && !next_key_expiry_.compare_exchange_weak(current, nanos)) {
  }
}

KeyCollection LogBus::CollectTableKeys(absl::Time now, size_t budget) {
  KeyCollection collection;
  for (auto it = tables_.begin(); it != tables_.end();) {
    if (collection.collected < budget) collection.collected += it->second.CollectExpired(now);
    collection.next_expiry = std::min(collection.next_expiry, it->second.NextExpiry());
    if (it->second.size() == 0) {
      tables_.erase(it++);
    } else {
      ++it;
    }
  }
  return collection;
}

StreamInfo LogBus::InfoOf(absl::string_view stream, const LogBounds& bounds) const {
  StreamInfo info = StreamInfoAt(stream, epoch_, bounds);
  info.earlier_epochs = log_->EarlierEpochs(stream);
  return info;
}

absl::StatusOr<StreamInfo> LogBus::Bounds(absl::string_view stream) {
  KEEL_RETURN_IF_ERROR(ValidateStreamName(stream));
  KEEL_ASSIGN_OR_RETURN(LogBounds bounds, log_->Bounds(stream));
  return InfoOf(stream, bounds);
}

absl::StatusOr<std::vector<StreamInfo>> LogBus::ListStreams(absl::string_view prefix,
                                                            size_t limit) {
  KEEL_ASSIGN_OR_RETURN(auto listed, log_->List(prefix, limit));
  std::vector<StreamInfo> infos;
  infos.reserve(listed.size());
  for (const auto& [stream, bounds] : listed) infos.push_back(InfoOf(stream, bounds));
  return infos;
}

absl::StatusOr<ReplayPage> LogBus::Replay(const ReplayRequest& request) {
  KEEL_RETURN_IF_ERROR(ValidateReplayRequest(request));
  KEEL_ASSIGN_OR_RETURN(LogBounds bounds, log_->Bounds(request.stream));
  const StreamInfo info = InfoOf(request.stream, bounds);
  KEEL_ASSIGN_OR_RETURN(uint64_t after, ResolvePosition(request.after, info, epoch_));
  KEEL_ASSIGN_OR_RETURN(uint64_t end, ResolveUntil(request, info, epoch_));

  ReplayPage page;
  page.head_sequence = info.last_sequence;
  PageSink sink(page, request, after);
  if (after < end) {
    // A filtered read may keep few of the events: no reserve then.
    if (request.filter.empty()) page.events.reserve(std::min<uint64_t>(request.limit, end - after));
    KEEL_RETURN_IF_ERROR(log_->Read(request.stream, after + 1, end, sink));
  }
  if (sink.hole() != 0) KEEL_RETURN_IF_ERROR(ExplainHole(request, after, sink.hole()));
  page.next = Cursor::For(request.stream, epoch_, sink.scanned());
  page.reached_end = sink.scanned() >= end;
  return page;
}

// The log skipped event `hole`. At the start of the read that is a trim
// that moved the stream's first event since its bounds were read: fine for
// `earliest`, a retention gap for a cursor. Anywhere else it is damage.
absl::Status LogBus::ExplainHole(const ReplayRequest& request, uint64_t after, uint64_t hole) {
  if (hole == after + 1) {
    KEEL_ASSIGN_OR_RETURN(LogBounds now, log_->Bounds(request.stream));
    if (now.first > hole) {
      if (request.after.kind == Position::Kind::kEarliest) return absl::OkStatus();
      return RetentionGapError(request.stream, RetentionGap{after, now.first});
    }
  }
  return absl::DataLossError(
      absl::StrCat("stream '", request.stream, "': event ", hole, " is missing from the log"));
}

absl::Status LogBus::TrimStream(absl::string_view stream, const LogBounds& bounds,
                                const RetentionLimits& limits, absl::Time now, uint64_t budget,
                                TrimReport& report) {
  KEEL_ASSIGN_OR_RETURN(LogTrim cut, PlanLogTrim(*log_, stream, bounds, limits, now, budget));
  if (cut.events() == 0) return absl::OkStatus();
  TrimOp op(stream, cut);
  absl::Status status = committer_.Submit(op);
  if (op.rejected.code() == absl::StatusCode::kAborted &&
      GetErrorKind(op.rejected) != ErrorKind::kConflict) {
    return absl::OkStatus();  // Raced with another trim; the next pass plans again.
  }
  KEEL_RETURN_IF_ERROR(op.rejected);
  KEEL_RETURN_IF_ERROR(status);
  report.events += cut.events();
  report.bytes += cut.bytes;
  return absl::OkStatus();
}

absl::StatusOr<TrimReport> LogBus::TrimRetention(size_t budget) {
  TrimReport report;
  const absl::Time now = context().clock->Now();
  KEEL_ASSIGN_OR_RETURN(auto streams, log_->List("", SIZE_MAX));
  for (const auto& [stream, bounds] : streams) {
    const RetentionLimits limits = policies().PolicyOf(stream).retention;
    if (!limits.Exceeded(bounds.count(), bounds.bytes, bounds.oldest_time, now)) continue;
    if (report.events >= budget) {
      report.more = true;
      return report;
    }
    KEEL_RETURN_IF_ERROR(TrimStream(stream, bounds, limits, now, budget - report.events, report));
  }
  if (absl::FromUnixNanos(next_key_expiry_.load()) <= now) {
    CollectKeysOp op(budget);
    absl::Status status = committer_.Submit(op);
    KEEL_RETURN_IF_ERROR(op.rejected);
    KEEL_RETURN_IF_ERROR(status);
    report.dedupe_keys = op.collected.collected;
    report.more = report.more || op.collected.next_expiry <= now;
  }
  // A stream trimmed up to the budget may still be over its bound.
  report.more = report.more || report.events >= budget;
  return report;
}

bool LogBus::NeedsTrim() const {
  const absl::Time now = context().clock->Now();
  if (absl::FromUnixNanos(next_key_expiry_.load()) <= now) return true;
  absl::StatusOr<std::vector<std::pair<std::string, LogBounds>>> streams = log_->List("", SIZE_MAX);
  if (!streams.ok()) return true;  // Trim then reports the error.
  for (const auto& [stream, bounds] : *streams) {
    if (policies().PolicyOf(stream).retention.Exceeded(bounds.count(), bounds.bytes,
                                                       bounds.oldest_time, now)) {
      return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<std::unique_ptr<EventBus>> NewLogBus(std::unique_ptr<StreamLog> log,
                                                    const DriverContext& context,
                                                    const LogBusOptions& options) {
  KEEL_ASSIGN_OR_RETURN(absl::Time next_key_expiry, log->NextKeyExpiry());
  auto bus = std::make_unique<LogBus>(std::move(log), context, options, next_key_expiry);
  KEEL_RETURN_IF_ERROR(bus->InitMetadataFromLog());
  return bus;
}

}  // namespace keel
