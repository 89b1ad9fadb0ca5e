#include "keel/drivers/jetstream/jetstream_bus.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "keel/core/driver_base.h"
#include "keel/core/errors.h"
#include "keel/core/fnv.h"
#include "keel/core/mutex.h"
#include "keel/core/policy_registry.h"
#include "keel/core/publish_validation.h"
#include "keel/core/status_macros.h"
#include "keel/drivers/jetstream/bus_layout.h"
#include "keel/drivers/jetstream/claim.h"
#include "keel/drivers/jetstream/declaration_watch.h"
#include "keel/drivers/jetstream/health.h"
#include "keel/drivers/jetstream/jetstream_api.h"
#include "keel/drivers/jetstream/jetstream_metadata.h"
#include "keel/drivers/jetstream/live_feed.h"
#include "keel/drivers/jetstream/nats_client.h"
#include "keel/drivers/jetstream/record_reader.h"
#include "keel/drivers/jetstream/stream_writer.h"

namespace keel::jetstream {
namespace {

// How often Replay reads a head again that is behind the cursor it was given.
constexpr int kHeadRereads = 3;

absl::Status CheckLayout(const StreamSnapshot& snapshot, const BusLayout& layout) {
  std::vector<std::string> problems;
  for (const std::string& subject : layout.StreamSubjects()) {
    if (std::find(snapshot.subjects.begin(), snapshot.subjects.end(), subject) ==
        snapshot.subjects.end()) {
      problems.push_back(absl::StrCat("its subjects lack '", subject, "'"));
    }
  }
  if (snapshot.republish_source != layout.RepublishSource() ||
      snapshot.republish_destination != layout.RepublishDestination()) {
    problems.push_back(absl::StrCat("it must republish '", layout.RepublishSource(), "' to '",
                                    layout.RepublishDestination(), "'"));
  }
  if (!snapshot.allow_rollup) problems.push_back("it must allow rollup headers");
  if (problems.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat("jetstream: stream ", layout.stream_name(),
                                                    " exists but is not laid out for "
                                                    "Keel bus '",
                                                    layout.bus(),
                                                    "': ", absl::StrJoin(problems, "; ")));
}

absl::StatusOr<StreamSnapshot> EnsureStream(JetStreamApi& api, const BusLayout& layout,
                                            const JetStreamOptions& options) {
  KEEL_ASSIGN_OR_RETURN(std::optional<StreamSnapshot> snapshot, api.Info());
  if (!snapshot) {
    StreamSpec spec;
    spec.name = layout.stream_name();
    // The random id makes a stream recreated under the same name another
    // epoch for cursors, even if it were created in the same nanosecond.
    spec.description = absl::StrCat("Keel event bus ", layout.shared() ? "(shared)" : layout.bus(),
                                    "; epoch id ", NewClaimId());
    spec.subjects = layout.StreamSubjects();
    spec.republish_source = layout.RepublishSource();
    spec.republish_destination = layout.RepublishDestination();
    spec.replicas = options.replicas;
    spec.max_bytes = options.max_bytes == 0 ? -1 : static_cast<int64_t>(options.max_bytes);
    spec.duplicate_window = options.duplicate_window;
    absl::Status created = api.Create(spec);
    // Another daemon may have created it first.
    if (!created.ok() && !absl::IsAlreadyExists(created)) return created;
    KEEL_ASSIGN_OR_RETURN(snapshot, api.Info());
    if (!snapshot) {
      return Unavailable(absl::StrCat("jetstream: stream ", spec.name, " vanished after creation"));
    }
  }
  KEEL_RETURN_IF_ERROR(CheckLayout(*snapshot, layout));
  return *std::move(snapshot);
}

// EnsureStream, retried while JetStream does not answer: a cluster that was
// just started, or that several daemons ask to create one replicated stream
// at once, may take seconds to elect its leaders, and a daemon started then
// waits for it as long as a publish would.
absl::StatusOr<StreamSnapshot> AwaitStream(JetStreamApi& api, const BusLayout& layout,
                                           const JetStreamOptions& options) {
  const absl::Time deadline = absl::Now() + options.publish_timeout;
  absl::Duration backoff = absl::Milliseconds(100);
  while (true) {
    absl::StatusOr<StreamSnapshot> snapshot = EnsureStream(api, layout, options);
    if (snapshot.ok() || GetErrorKind(snapshot.status()) != ErrorKind::kUnavailable ||
        absl::Now() + backoff > deadline) {
      return snapshot;
    }
    absl::SleepFor(backoff);
    backoff = std::min(backoff * 2, absl::Seconds(2));
  }
}

// Cursors carry the epoch: a recreated JetStream stream (another creation
// time and description id) or another bus gets another one.
uint64_t EpochOf(const StreamSnapshot& snapshot, const BusLayout& layout) {
  const uint64_t epoch =
      Fnv1a64(absl::StrCat(snapshot.created, "\n", snapshot.description, "\n", layout.bus()));
  return epoch == 0 ? 1 : epoch;
}

class JetStreamBus final : public DriverBase {
 public:
  JetStreamBus(const DriverContext& context, const JetStreamOptions& options,
               std::unique_ptr<NatsClient> client, BusLayout layout, uint64_t epoch)
      : DriverBase(context, PublishLimits{}),
        options_(options),
        client_(std::move(client)),
        layout_(std::move(layout)),
        api_(*client_, layout_.stream_name(), options.request_timeout),
        reader_(api_, layout_),
        epoch_(epoch),
        env_{api_,
             reader_,
             layout_,
             *context.clock,
             ClaimTimeoutsOf(options),
             client_->max_payload(),
             epoch,
             options.max_events_per_stream},
        next_key_expiry_(absl::ToUnixNanos(absl::InfiniteFuture())) {
    InitFanOut();
  }
  ~JetStreamBus() override { Close().IgnoreError(); }

  absl::Status Start() {
    KEEL_RETURN_IF_ERROR(InitMetadata(
        std::make_unique<JetStreamMetadata>(api_, layout_, ClaimTimeoutsOf(options_))));
    feed_ = std::make_unique<LiveFeed>(*client_, api_, reader_, layout_, fanout(),
                                       *context().logger, health_);
    KEEL_RETURN_IF_ERROR(feed_->Start());
    declarations_ = std::make_unique<DeclarationWatch>(
        *client_, layout_, *context().logger,
        [this](absl::string_view stream) { return RefreshDeclaration(stream); },
        [this] { return RefreshDeclarations(); });
    return declarations_->Start();
  }

  absl::StatusOr<ReplayPage> Replay(const ReplayRequest& request) override;
  absl::StatusOr<StreamInfo> Bounds(absl::string_view stream) override;
  absl::StatusOr<std::vector<StreamInfo>> ListStreams(absl::string_view prefix,
                                                      size_t limit) override;
  uint64_t epoch() const override { return epoch_; }
  bool NeedsTrim() const override;
  std::string DegradedReason() const override {
    std::string problem = client_->ConnectionProblem();
    return problem.empty() ? health_.Problem() : problem;
  }

 protected:
  absl::StatusOr<std::vector<Receipt>> Append(absl::string_view stream, std::vector<Event> events,
                                              const AppendRequest& request) override;
  absl::StatusOr<TrimReport> TrimRetention(size_t budget) override;
  absl::Status OnClose() override {
    if (declarations_) declarations_->Stop();
    if (feed_) feed_->Stop();
    client_->Close();
    return absl::OkStatus();
  }

 private:
  StreamWriter& WriterFor(absl::string_view stream);
  StreamInfo InfoOf(absl::string_view stream, const std::optional<StoredRecord>& tip) const;
  // Runs a JetStream request and notes in health_ whether JetStream answered.
  template <typename Request>
  auto Observe(Request request) {
    return health_.Observe(std::move(request));
  }
  absl::StatusOr<std::optional<StoredRecord>> ReadHeadFor(const ReplayRequest& request);
  // A read that found event `missing` gone (see ExplainMissing).
  absl::Status ExplainMissing(const ReplayRequest& request, uint64_t after, uint64_t missing,
                              bool at_start);
  void LowerKeyExpiry(absl::Time expiry);

  const JetStreamOptions options_;
  const std::unique_ptr<NatsClient> client_;
  const BusLayout layout_;
  JetStreamApi api_;
  RecordReader reader_;
  const uint64_t epoch_;
  WriterEnv env_;
  Health health_;
  // Unix nanos of the earliest idempotency-key expiry of any writer.
  std::atomic<int64_t> next_key_expiry_;
  Mutex writers_mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<StreamWriter>> writers_
      ABSL_GUARDED_BY(writers_mu_);
  // Last: their threads stop before the rest goes.
  std::unique_ptr<LiveFeed> feed_;
  std::unique_ptr<DeclarationWatch> declarations_;
};

StreamWriter& JetStreamBus::WriterFor(absl::string_view stream) {
  MutexLock lock(&writers_mu_);
  std::unique_ptr<StreamWriter>& writer = writers_[stream];
  if (writer == nullptr) writer = std::make_unique<StreamWriter>(std::string(stream), env_);
  return *writer;
}

void JetStreamBus::LowerKeyExpiry(absl::Time expiry) {
  const int64_t nanos = absl::ToUnixNanos(expiry);
  int64_t current = next_key_expiry_.load();
  while (nanos < current && !next_key_expiry_.compare_exchange_weak(current, nanos)) {
  }
}

absl::StatusOr<std::vector<Receipt>> JetStreamBus::Append(absl::string_view stream,
                                                          std::vector<Event> events,
                                                          const AppendRequest& request) {
  KEEL_ASSIGN_OR_RETURN(AppendResult result, Observe([&] {
                          return WriterFor(stream).Append(std::move(events), request);
                        }));
  LowerKeyExpiry(result.next_key_expiry);
  uint64_t newest = 0;
  for (const WrittenRecord* written : {&result.written, &result.trimmed}) {
    if (written->js_seq == 0) continue;
    feed_->NoteStored(stream, written->js_seq, written->header);
    newest = std::max(newest, written->js_seq);
  }
  // Subscribers of this daemon get the events from the feed, before the
  // publisher gets its receipt (as with a driver that stores locally). With
  // none there is nobody to be first: one who subscribes later reads the
  // events from the stream, and the feed's copy repeats what it read.
  if (newest != 0 && fanout().HasSubscribers(stream)) feed_->AwaitDelivered(stream, newest);
  return std::move(result.receipts);
}

StreamInfo JetStreamBus::InfoOf(absl::string_view stream,
                                const std::optional<StoredRecord>& tip) const {
  return StreamInfoAt(stream, epoch_, tip ? tip->header.bounds() : LogBounds{});
}

absl::StatusOr<StreamInfo> JetStreamBus::Bounds(absl::string_view stream) {
  KEEL_RETURN_IF_ERROR(ValidateStreamName(stream));
  KEEL_ASSIGN_OR_RETURN(std::optional<StoredRecord> tip,
                        Observe([&] { return reader_.Last(stream); }));
  return InfoOf(stream, tip);
}

absl::StatusOr<std::vector<StreamInfo>> JetStreamBus::ListStreams(absl::string_view prefix,
                                                                  size_t limit) {
  KEEL_ASSIGN_OR_RETURN(std::optional<StreamSnapshot> snapshot,
                        Observe([&] { return api_.Info(layout_.event_filter()); }));
  std::vector<std::string> names;
  if (snapshot) {
    for (const std::string& subject : snapshot->matching_subjects) {
      std::optional<std::string> stream = layout_.StreamOfSubject(subject);
      if (stream && absl::StartsWith(*stream, prefix)) names.push_back(*std::move(stream));
    }
  }
  std::sort(names.begin(), names.end());
  if (names.size() > limit) names.resize(limit);
  std::vector<StreamInfo> infos;
  infos.reserve(names.size());
  for (const std::string& stream : names) {
    KEEL_ASSIGN_OR_RETURN(std::optional<StoredRecord> tip,
                          Observe([&] { return reader_.Last(stream); }));
    infos.push_back(InfoOf(stream, tip));
  }
  return infos;
}

absl::StatusOr<ReplayPage> JetStreamBus::Replay(const ReplayRequest& request) {
  KEEL_RETURN_IF_ERROR(ValidateReplayRequest(request));
  KEEL_ASSIGN_OR_RETURN(std::optional<StoredRecord> tip, ReadHeadFor(request));
  const StreamInfo info = InfoOf(request.stream, tip);
  KEEL_ASSIGN_OR_RETURN(uint64_t after, ResolvePosition(request.after, info, epoch_));
  KEEL_ASSIGN_OR_RETURN(uint64_t end, ResolveUntil(request, info, epoch_));

  ReplayPage page;
  page.head_sequence = info.last_sequence;
  uint64_t scanned = after;
  if (after < end) {
    if (request.filter.empty()) page.events.reserve(std::min<uint64_t>(request.limit, end - after));
    KEEL_ASSIGN_OR_RETURN(EventScan scan, Observe([&] {
                            return reader_.ReadEvents(
                                request.stream, after + 1, end, tip->ref(),
                                [&]() -> Event& { return page.events.emplace_back(); },
                                [&] {
                                  if (!request.filter.Matches(page.events.back()))
                                    page.events.pop_back();
                                  return page.events.size() < request.limit;
                                });
                          }));
    if (scan.missing_start != 0) {
      KEEL_RETURN_IF_ERROR(ExplainMissing(request, after, scan.missing_start, true));
    }
    if (scan.missing_at != 0) {
      // The page ends where the trim cut it; the next one starts past it.
      KEEL_RETURN_IF_ERROR(ExplainMissing(request, after, scan.missing_at, false));
    }
    scanned = scan.scanned;
  }
  page.next = Cursor::For(request.stream, epoch_, scanned);
  page.reached_end = scanned >= end;
  return page;
}

// A stream leader elected moments ago may answer before it applied its log
// (nats-server before 2.11), showing an older head: a cursor of this bus
// past that head is read again a few times before it is called a mismatch.
absl::StatusOr<std::optional<StoredRecord>> JetStreamBus::ReadHeadFor(
    const ReplayRequest& request) {
  const uint64_t tag = StreamFingerprint(request.stream);
  uint64_t wanted = 0;  // The furthest sequence a cursor of this stream names.
  auto consider = [&](const Cursor& cursor) {
    if (cursor.epoch == epoch_ && cursor.stream_tag == tag)
      wanted = std::max(wanted, cursor.sequence);
  };
  if (request.after.kind == Position::Kind::kCursor) consider(request.after.cursor);
  if (request.until) consider(*request.until);
  for (int attempt = 0;; ++attempt) {
    KEEL_ASSIGN_OR_RETURN(std::optional<StoredRecord> tip,
                          Observe([&] { return reader_.Last(request.stream); }));
    const uint64_t last = tip ? tip->header.next() - 1 : 0;
    if (wanted <= last || attempt == kHeadRereads) return tip;
    absl::SleepFor(absl::Milliseconds(100));
  }
}

// The records holding event `missing` were purged while the read went on.
// A trim explains it (the stream's first sequence is past it now): at the
// start of the read that is fine for `earliest` and a retention gap for a
// cursor; further on, the page just ends there. Anything else is damage.
absl::Status JetStreamBus::ExplainMissing(const ReplayRequest& request, uint64_t after,
                                          uint64_t missing, bool at_start) {
  KEEL_ASSIGN_OR_RETURN(std::optional<StoredRecord> tip,
                        Observe([&] { return reader_.Last(request.stream); }));
  const uint64_t first = tip ? tip->header.first : 1;
  if (first > missing) {
    if (!at_start || request.after.kind == Position::Kind::kEarliest) return absl::OkStatus();
    return RetentionGapError(request.stream, RetentionGap{after, first});
  }
  return absl::DataLossError(absl::StrCat("jetstream: stream '", request.stream, "': event ",
                                          missing, " is missing from JetStream"));
}

bool JetStreamBus::NeedsTrim() const {
  const absl::Time now = context().clock->Now();
  if (absl::FromUnixNanos(next_key_expiry_.load()) <= now) return true;
  for (const auto& [stream, bounds] : feed_->Streams()) {
    if (policies().PolicyOf(stream).retention.Exceeded(bounds.count(), bounds.bytes,
                                                       bounds.oldest_time, now)) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<TrimReport> JetStreamBus::TrimRetention(size_t budget) {
  TrimReport report;
  const absl::Time now = context().clock->Now();
  std::vector<std::pair<std::string, LogBounds>> streams = feed_->Streams();
  std::sort(streams.begin(), streams.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [stream, bounds] : streams) {
    const StreamPolicy policy = policies().PolicyOf(stream);
    if (!policy.retention.Exceeded(bounds.count(), bounds.bytes, bounds.oldest_time, now)) continue;
    if (report.events >= budget) {
      report.more = true;
      return report;
    }
    KEEL_ASSIGN_OR_RETURN(TrimResult trimmed, Observe([&] {
                            return WriterFor(stream).Trim(policy.retention, now,
                                                          budget - report.events,
                                                          policy.dedupe_window);
                          }));
    if (trimmed.written.js_seq != 0) {
      feed_->NoteStored(stream, trimmed.written.js_seq, trimmed.written.header);
    }
    if (!trimmed.purge.ok()) {
      context().logger->Warn(
          absl::StrCat("keel jetstream: stream '", stream,
                       "': trimmed, but the space was not freed yet: ", trimmed.purge.message()));
    }
    report.events += trimmed.events;
    report.bytes += trimmed.bytes;
  }
  if (absl::FromUnixNanos(next_key_expiry_.load()) <= now) {
    std::vector<StreamWriter*> writers;
    {
      MutexLock lock(&writers_mu_);
      for (auto& [stream, writer] : writers_) writers.push_back(writer.get());
    }
    absl::Time next = absl::InfiniteFuture();
    for (StreamWriter* writer : writers) {
      report.dedupe_keys += writer->CollectKeys(now);
      next = std::min(next, writer->NextKeyExpiry());
    }
    next_key_expiry_.store(absl::ToUnixNanos(next));
  }
  report.more = report.more || report.events >= budget;
  return report;
}

}  // namespace

absl::StatusOr<std::unique_ptr<EventBus>> OpenJetStreamBus(const JetStreamOptions& options,
                                                           const DriverContext& context) {
  KEEL_ASSIGN_OR_RETURN(BusLayout layout, BusLayout::For(options.bus, options.shared_stream));
  KEEL_ASSIGN_OR_RETURN(std::unique_ptr<NatsClient> client,
                        NatsClient::Connect(options.connection));
  JetStreamApi api(*client, layout.stream_name(), options.request_timeout);
  KEEL_ASSIGN_OR_RETURN(StreamSnapshot snapshot, AwaitStream(api, layout, options));
  const uint64_t epoch = EpochOf(snapshot, layout);
  auto bus =
      std::make_unique<JetStreamBus>(context, options, std::move(client), std::move(layout), epoch);
  KEEL_RETURN_IF_ERROR(bus->Start());
  return bus;
}

}  // namespace keel::jetstream
