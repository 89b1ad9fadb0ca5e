#include "drivers/durable/durable_bus.h"

#include <algorithm>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/driver_base.h"
#include "core/errors.h"
#include "core/status_macros.h"
#include "drivers/durable/group_commit.h"
#include "drivers/durable/key_layout.h"
#include "drivers/durable/recovery.h"
#include "drivers/durable/tail_verifier.h"

namespace keel {
namespace {

using durable::Head;
using durable::PendingAppend;

class DurableBus final : public DriverBase {
 public:
  DurableBus(std::shared_ptr<StateStore> store, const DurableOptions& options,
             const DriverContext& context, durable::RecoveredState recovered)
      : DriverBase(context, PublishLimits{}),
        store_(std::move(store)),
        options_(options),
        epoch_(recovered.epoch),
        format_(recovered.format),
        committer_(options.max_group_bytes,
                   [this](absl::Span<PendingAppend* const> group) { return Commit(group); }),
        heads_(recovered.heads),
        verifier_(*store_, format_, *context.logger, recovered.heads,
                  [this](absl::string_view stream, const Head& head) {
                    MutexLock lock(&heads_mu_);
                    heads_[stream] = head;
                  }) {
    InitFanOut();
    if (options_.verify_in_background) verifier_.StartSweep();
    if (options_.sync == SyncMode::kInterval) syncer_ = std::thread([this] { SyncLoop(); });
  }
  ~DurableBus() override { Close().IgnoreError(); }

  absl::StatusOr<ReplayPage> Replay(const ReplayRequest& request) override;
  absl::StatusOr<StreamInfo> Bounds(absl::string_view stream) override;
  absl::StatusOr<std::vector<StreamInfo>> ListStreams(absl::string_view prefix,
                                                      size_t limit) override;
  uint64_t epoch() const override { return epoch_; }

 protected:
  absl::StatusOr<std::vector<Receipt>> Append(absl::string_view stream,
                                              std::vector<Event> events) override;
  absl::Status OnClose() override;

 private:
  absl::Status Commit(absl::Span<PendingAppend* const> group);
  bool SyncThisWrite();
  void SyncLoop();
  Head CurrentHead(absl::string_view stream) const;
  StreamInfo InfoOf(absl::string_view stream, const Head& head) const;

  const std::shared_ptr<StateStore> store_;
  const DurableOptions options_;
  const uint64_t epoch_;
  const durable::StoreFormat format_;
  durable::GroupCommitter committer_;

  mutable Mutex heads_mu_;
  absl::flat_hash_map<std::string, Head> heads_ ABSL_GUARDED_BY(heads_mu_);
  durable::TailVerifier verifier_;  // After heads_: it installs repairs there.

  Mutex sync_mu_;
  absl::Time last_sync_ ABSL_GUARDED_BY(sync_mu_) = absl::InfinitePast();
  bool dirty_ ABSL_GUARDED_BY(sync_mu_) = false;  // Unsynced writes exist.
  bool stopping_ ABSL_GUARDED_BY(sync_mu_) = false;
  std::thread syncer_;
};

Head DurableBus::CurrentHead(absl::string_view stream) const {
  ReaderMutexLock lock(&heads_mu_);
  auto it = heads_.find(stream);
  return it == heads_.end() ? Head{} : it->second;
}

StreamInfo DurableBus::InfoOf(absl::string_view stream, const Head& head) const {
  StreamInfo info;
  info.stream = std::string(stream);
  info.first_sequence = head.first;
  info.last_sequence = head.last();
  info.count = head.count();
  info.bytes = head.bytes;
  info.oldest_time = head.oldest_time;
  info.head = Cursor::For(stream, epoch_, head.last());
  return info;
}

absl::StatusOr<std::vector<Receipt>> DurableBus::Append(absl::string_view stream,
                                                        std::vector<Event> events) {
  KEEL_RETURN_IF_ERROR(verifier_.Ensure(stream));
  // Encoding happens here, in parallel across publishers, not in the leader.
  std::vector<std::string> values;
  values.reserve(events.size());
  size_t bytes = 0;
  for (const Event& event : events) {
    values.push_back(durable::EncodeEntry(event, format_));
    bytes += values.back().size();
  }
  PendingAppend append;
  append.stream = stream;
  append.events = &events;
  append.values = &values;
  append.bytes = bytes;
  KEEL_RETURN_IF_ERROR(committer_.Submit(append));
  std::vector<Receipt> receipts;
  receipts.reserve(events.size());
  for (const Event& event : events) receipts.push_back(MakeReceipt(event));
  return receipts;
}

absl::Status DurableBus::Commit(absl::Span<PendingAppend* const> group) {
  absl::flat_hash_map<absl::string_view, Head> staged;
  WriteBatch batch;
  for (PendingAppend* append : group) {
    Head& head = staged.try_emplace(append->stream, CurrentHead(append->stream)).first->second;
    for (size_t i = 0; i < append->events->size(); ++i) {
      Event& event = (*append->events)[i];
      if (head.count() == 0) head.oldest_time = event.time;
      event.sequence = head.next++;
      head.bytes += event.ApproximateSize();
      // The value is not needed after the write: move it, not copy it.
      batch.PutOwned(durable::EntryKey(append->stream, event.sequence),
                     std::move((*append->values)[i]));
    }
  }
  for (const auto& [stream, head] : staged) batch.Put(durable::HeadKey(stream), EncodeHead(head));

  const absl::Time start = absl::Now();
  absl::Status status = store_->Write(batch, WriteOptions{.sync = SyncThisWrite()});
  if (context().on_store_write) context().on_store_write(absl::Now() - start);
  if (!status.ok()) {
    for (PendingAppend* append : group) {
      for (Event& event : *append->events) event.sequence = 0;
    }
    return status;
  }
  {
    MutexLock lock(&heads_mu_);
    for (const auto& [stream, head] : staged) heads_[stream] = head;
  }
  // Still the only committer: deliveries leave in sequence order per stream.
  for (PendingAppend* append : group) fanout().Deliver(append->stream, *append->events);
  return absl::OkStatus();
}

bool DurableBus::SyncThisWrite() {
  switch (options_.sync) {
    case SyncMode::kAlways:
      return true;
    case SyncMode::kNone:
      return false;
    case SyncMode::kInterval:
      break;
  }
  MutexLock lock(&sync_mu_);
  absl::Time now = absl::Now();
  if (now - last_sync_ >= options_.sync_interval) {
    last_sync_ = now;
    dirty_ = false;
    return true;
  }
  dirty_ = true;
  return false;
}

// kInterval: makes sure unsynced writes reach the disk within one interval
// even when no further publish comes to carry the sync.
void DurableBus::SyncLoop() {
  MutexLock lock(&sync_mu_);
  while (!stopping_) {
    sync_mu_.AwaitWithTimeout([this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(sync_mu_) { return stopping_; },
                             options_.sync_interval);
    if (!dirty_ || absl::Now() - last_sync_ < options_.sync_interval) continue;
    dirty_ = false;
    last_sync_ = absl::Now();
    sync_mu_.Unlock();
    absl::Status status = store_->Write(WriteBatch(), WriteOptions{.sync = true});
    if (!status.ok()) context().logger->Error(absl::StrCat("durable: periodic sync failed: ",
                                                           status.ToString()));
    sync_mu_.Lock();
  }
}

absl::StatusOr<StreamInfo> DurableBus::Bounds(absl::string_view stream) {
  KEEL_RETURN_IF_ERROR(ValidateStreamName(stream));
  KEEL_RETURN_IF_ERROR(verifier_.Ensure(stream));
  return InfoOf(stream, CurrentHead(stream));
}

absl::StatusOr<ReplayPage> DurableBus::Replay(const ReplayRequest& request) {
  KEEL_RETURN_IF_ERROR(ValidateReplayRequest(request));
  KEEL_RETURN_IF_ERROR(verifier_.Ensure(request.stream));
  StreamInfo info = InfoOf(request.stream, CurrentHead(request.stream));
  KEEL_ASSIGN_OR_RETURN(uint64_t after, ResolvePosition(request.after, info, epoch_));
  KEEL_ASSIGN_OR_RETURN(uint64_t end, ResolveUntil(request, info, epoch_));

  ReplayPage page;
  page.head_sequence = info.last_sequence;
  uint64_t scanned = after;
  if (after < end) {
    std::unique_ptr<StoreIterator> it = store_->NewIterator(
        KeyRange{durable::EntryKey(request.stream, after + 1),
                 durable::EntryKey(request.stream, end + 1)});
    for (it->Seek(durable::EntryKey(request.stream, after + 1));
         it->Valid() && page.events.size() < request.limit; it->Next()) {
      KEEL_ASSIGN_OR_RETURN(uint64_t seq, durable::EntrySequence(it->key()));
      absl::StatusOr<Event> event = durable::DecodeEntry(request.stream, seq, it->value(), format_);
      if (!event.ok()) {
        return absl::DataLossError(absl::StrCat("key ", durable::PrintableKey(it->key()), ": ",
                                                event.status().message()));
      }
      scanned = seq;
      if (request.filter.Matches(*event)) page.events.push_back(*std::move(event));
    }
    KEEL_RETURN_IF_ERROR(it->status());
  }
  page.next = Cursor::For(request.stream, epoch_, scanned);
  page.reached_end = scanned >= end;
  return page;
}

absl::StatusOr<std::vector<StreamInfo>> DurableBus::ListStreams(absl::string_view prefix,
                                                                size_t limit) {
  std::vector<StreamInfo> infos;
  {
    ReaderMutexLock lock(&heads_mu_);
    for (const auto& [stream, head] : heads_) {
      if (absl::StartsWith(stream, prefix)) infos.push_back(InfoOf(stream, head));
    }
  }
  std::sort(infos.begin(), infos.end(),
            [](const StreamInfo& a, const StreamInfo& b) { return a.stream < b.stream; });
  if (infos.size() > limit) infos.resize(limit);
  return infos;
}

absl::Status DurableBus::OnClose() {
  verifier_.Stop();
  {
    MutexLock lock(&sync_mu_);
    stopping_ = true;
  }
  if (syncer_.joinable()) syncer_.join();
  absl::Status status;
  if (options_.sync != SyncMode::kAlways) {
    status = store_->Write(WriteBatch(), WriteOptions{.sync = true});  // Flush before exit.
  }
  if (options_.close_store) status.Update(store_->Close());
  return status;
}

}  // namespace

absl::StatusOr<DurableOptions> DurableOptionsFromConfig(const Config& config) {
  DurableOptions options;
  const std::string sync = config.GetString("sync", "always");
  if (sync == "always") {
    options.sync = SyncMode::kAlways;
  } else if (sync == "interval") {
    options.sync = SyncMode::kInterval;
  } else if (sync == "none") {
    options.sync = SyncMode::kNone;
  } else {
    return InvalidArgument(absl::StrCat("option 'sync': '", sync,
                                        "' is not one of always, interval, none"));
  }
  KEEL_ASSIGN_OR_RETURN(options.sync_interval,
                        config.GetDuration("sync_interval", options.sync_interval));
  KEEL_ASSIGN_OR_RETURN(options.max_group_bytes,
                        config.GetUint("max_group_bytes", options.max_group_bytes, 1));
  return options;
}

absl::StatusOr<std::unique_ptr<EventBus>> OpenDurableBus(std::shared_ptr<StateStore> store,
                                                         const DurableOptions& options,
                                                         const DriverContext& context) {
  KEEL_ASSIGN_OR_RETURN(durable::RecoveredState recovered, durable::Recover(*store));
  return std::make_unique<DurableBus>(std::move(store), options, context, std::move(recovered));
}

}  // namespace keel
