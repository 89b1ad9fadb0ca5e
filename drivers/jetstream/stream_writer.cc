#include "keel/drivers/jetstream/stream_writer.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"
#include "keel/core/log_trim.h"
#include "keel/core/status_macros.h"
#include "keel/drivers/jetstream/bus_layout.h"
#include "keel/drivers/jetstream/claim.h"

namespace keel::jetstream {
namespace {

// A writer gives up after this many lost slots in one call: other writers
// appended that often meanwhile, which only a runaway loop explains.
constexpr int kMaxRounds = 10'000;

absl::Status Damaged(absl::string_view stream, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("jetstream: stream '", stream, "': ", what));
}

// The read side of a stream as core/log_trim.h plans cuts over it, noting
// the record that holds the first event the plan keeps.
class TrimReadView final : public StreamLog {
 public:
  TrimReadView(RecordReader& reader, const RecordRef& tip) : reader_(reader), tip_(tip) {}

  uint64_t epoch() const override { return 0; }
  absl::StatusOr<LogBounds> Bounds(absl::string_view) override { return tip_.header.bounds(); }
  absl::StatusOr<std::vector<std::pair<std::string, LogBounds>>> List(absl::string_view,
                                                                      size_t) override {
    return absl::UnimplementedError("a trim plan lists nothing");
  }
  absl::Status Read(absl::string_view stream, uint64_t from, uint64_t to, ReadSink& sink) override {
    absl::StatusOr<EventScan> scan = reader_.ReadEvents(
        stream, from, to, tip_, [&]() -> Event& { return sink.Slot(); },
        [&] {
          if (sink.Take()) return true;
          stopped_at_ = true;
          return false;
        },
        &record_);
    if (!scan.ok()) return scan.status();
    if (scan->missing_start != 0 || scan->missing_at != 0) {
      return absl::AbortedError("another trim purged records while this one was planned");
    }
    return absl::OkStatus();
  }
  absl::Status Append(absl::Span<const LogAppend>) override {
    return absl::UnimplementedError("a trim plan appends nothing");
  }
  absl::Status TrimPrefix(absl::string_view, const LogTrim&) override {
    return absl::UnimplementedError("a trim plan trims nothing");
  }

  // The JetStream sequence of the record of the event the plan stopped at.
  uint64_t stop_record() const { return stopped_at_ ? record_ : 0; }

 private:
  RecordReader& reader_;
  const RecordRef tip_;
  uint64_t record_ = 0;
  bool stopped_at_ = false;
};

}  // namespace

StreamWriter::StreamWriter(std::string stream, WriterEnv& env)
    : stream_(std::move(stream)), subject_(env.layout.EventSubject(stream_)), env_(env) {}

absl::Status StreamWriter::CheckHeadLocked(const StoredRecord& head) {
  // The head names the slot it claimed, "<subject>@<J>": the record at J
  // must exist (unless a trim purged it) and end where the head starts,
  // and no record may lie between them. Anything else was written around
  // Keel's conditional publish.
  const std::string prefix = absl::StrCat(subject_, "@");
  uint64_t after = 0;
  if (head.msg_id.rfind(prefix, 0) != 0 ||
      !absl::SimpleAtoi(absl::string_view(head.msg_id).substr(prefix.size()), &after) ||
      after >= head.js_seq) {
    return Damaged(stream_,
                   absl::StrCat("its newest message, ", head.js_seq,
                                ", was not written by Keel (its slot id is '", head.msg_id, "')"));
  }
  if (after == 0) {
    if (head.header.seq == 1) return absl::OkStatus();
    return Damaged(stream_, absl::StrCat("its only message, ", head.js_seq, ", starts at ",
                                         head.header.seq, " rather than 1"));
  }
  KEEL_ASSIGN_OR_RETURN(std::optional<StoredRecord> previous, env_.reader.NextFrom(stream_, after));
  if (!previous || previous->js_seq != after) return absl::OkStatus();  // Purged by a trim.
  if (previous->header.next() != head.header.seq) {
    return Damaged(stream_, absl::StrCat("its newest message, ", head.js_seq, ", starts at ",
                                         head.header.seq, " but follows message ", after,
                                         ", which ends at ", previous->header.next() - 1));
  }
  KEEL_ASSIGN_OR_RETURN(std::optional<StoredRecord> between,
                        env_.reader.NextFrom(stream_, after + 1));
  if (between && between->js_seq != head.js_seq) {
    return Damaged(stream_,
                   absl::StrCat("message ", between->js_seq, " lies between its newest message, ",
                                head.js_seq, ", and the message that one follows, ", after));
  }
  return absl::OkStatus();
}

absl::Status StreamWriter::LoadLocked(absl::Duration window) {
  // Loaded only once everything is: a writer that knew part of the keys
  // would let a duplicate through.
  tip_ = RecordRef{};
  keys_ = DedupeTable();
  KEEL_ASSIGN_OR_RETURN(std::optional<StoredRecord> head, env_.reader.Last(stream_));
  if (!head) {
    loaded_ = true;
    return absl::OkStatus();
  }
  KEEL_RETURN_IF_ERROR(CheckHeadLocked(*head));
  tip_ = head->ref();
  // The idempotency keys still in their window: those of the records
  // whose newest event is younger than the window, read oldest first.
  const absl::Time since = env_.clock.Now() - window;
  if (window > absl::ZeroDuration() && head->header.last_time != absl::InfinitePast() &&
      head->header.last_time >= since) {
    KEEL_ASSIGN_OR_RETURN(
        StoredRecord record,
        env_.reader.LowerBound(stream_, tip_, [since](const RecordHeader& header) {
          return header.last_time >= since;
        }));
    while (true) {
      KEEL_RETURN_IF_ERROR(RememberKeysLocked(record, window));
      if (record.js_seq >= tip_.js_seq) break;
      KEEL_ASSIGN_OR_RETURN(std::optional<StoredRecord> next,
                            env_.reader.NextFrom(stream_, record.js_seq + 1));
      if (!next) break;
      record = *std::move(next);
    }
  }
  loaded_ = true;
  return absl::OkStatus();
}

absl::Status StreamWriter::RememberKeysLocked(const StoredRecord& record, absl::Duration window) {
  if (record.header.keyed == 0 || window <= absl::ZeroDuration()) return absl::OkStatus();
  Event event;
  absl::StatusOr<bool> decoded = DecodeRecordEvents(
      record.data, record.header, stream_, record.header.seq, record.header.next() - 1,
      [&]() -> Event& {
        event = Event{};
        return event;
      },
      [&] {
        if (event.idempotency_key) {
          keys_.Remember(*event.idempotency_key, DedupeHit{event.sequence, event.id},
                         event.time + window);
        }
        return true;
      });
  return decoded.status();
}

absl::Status StreamWriter::FoldLocked(const StoredRecord& record, absl::Duration window) {
  if (record.header.seq != tip_.header.next()) {
    return Damaged(stream_,
                   absl::StrCat("message ", record.js_seq, " starts at ", record.header.seq,
                                " but the record before it ends at ", tip_.header.next() - 1,
                                ": a record was written around Keel's conditional "
                                "publish"));
  }
  KEEL_RETURN_IF_ERROR(RememberKeysLocked(record, window));
  tip_ = record.ref();
  return absl::OkStatus();
}

absl::StatusOr<bool> StreamWriter::RefreshLocked(absl::Duration window, absl::string_view claim) {
  bool found = false;
  while (true) {
    KEEL_ASSIGN_OR_RETURN(std::optional<StoredRecord> next,
                          env_.reader.NextFrom(stream_, tip_.js_seq + 1));
    if (!next) return found;
    KEEL_RETURN_IF_ERROR(FoldLocked(*next, window));
    if (!claim.empty() && next->header.claim == claim) found = true;
  }
}

absl::StatusOr<bool> StreamWriter::ClaimNextLocked(RecordHeader header, std::string data,
                                                   absl::Duration window) {
  header.claim = NewClaimId();
  Claim claim;
  claim.subject = subject_;
  claim.after = tip_.js_seq;
  claim.id = header.claim;
  AppendRecordHeaders(header, claim.headers);
  claim.data = std::move(data);
  size_t size = claim.data.size() + subject_.size() + 256;
  for (const auto& [key, value] : claim.headers) size += key.size() + value.size() + 4;
  if (env_.max_record_bytes > 0 && size > env_.max_record_bytes) {
    return PayloadTooLarge(absl::StrCat("jetstream: a record of ", size,
                                        " bytes is larger than the NATS server accepts (",
                                        env_.max_record_bytes, " bytes, its max_payload)"));
  }
  KEEL_ASSIGN_OR_RETURN(ClaimOutcome outcome, PublishClaim(env_.api, claim, env_.claim_timeouts));
  if (outcome.kind == ClaimOutcome::Kind::kStored) {
    env_.reader.Note(stream_, header, outcome.sequence);
    tip_ = RecordRef{outcome.sequence, std::move(header)};
    return true;
  }
  // The slot is gone; an unanswered attempt of this claim may have taken a
  // later one, which reading what was missed finds.
  KEEL_ASSIGN_OR_RETURN(bool ours, RefreshLocked(window, claim.id));
  return ours;
}

absl::StatusOr<AppendResult> StreamWriter::Append(std::vector<Event> events,
                                                  const AppendRequest& request) {
  QueuedAppend self;
  self.events = std::move(events);
  self.request = request;
  for (const Event& event : self.events) self.bytes += event.ApproximateSize();
  std::vector<QueuedAppend*> group;
  {
    queue_mu_.Lock();
    queue_.push_back(&self);
    if (leading_) {
      // Woken once, by the leader that answered this publish or handed it
      // the lead, not by every change of the queue.
      queue_mu_.Unlock();
      self.wake.Wait();
      if (self.done) return std::move(self.result);
      queue_mu_.Lock();
    }
    // Lead: take the publishes queued meanwhile into the same record, as
    // long as they fit one.
    leading_ = true;
    const size_t budget = std::max<size_t>(env_.max_record_bytes / 2, 64 << 10);
    size_t bytes = 0;
    while (!queue_.empty() && (group.empty() || bytes + queue_.front()->bytes <= budget)) {
      bytes += queue_.front()->bytes;
      group.push_back(queue_.front());
      queue_.pop_front();
    }
    queue_mu_.Unlock();
  }
  {
    MutexLock lock(&mu_);
    CommitLocked(group);
  }
  std::vector<QueuedAppend*> woken;
  {
    MutexLock lock(&queue_mu_);
    leading_ = !queue_.empty();
    if (leading_) woken.push_back(queue_.front());
  }
  for (QueuedAppend* member : group) {
    if (member == &self) continue;
    member->done = true;
    woken.push_back(member);
  }
  // Each waiter is posted exactly once and returns (destroying itself) as
  // soon as it is: no use of it after its Post().
  for (QueuedAppend* member : woken) member->wake.Post();
  return std::move(self.result);
}

void StreamWriter::CommitLocked(const std::vector<QueuedAppend*>& group) {
  std::vector<QueuedAppend*> pending = group;
  auto fail_pending = [&](const absl::Status& status) {
    for (QueuedAppend* member : pending) member->result = status;
  };
  absl::Duration window = absl::ZeroDuration();
  for (QueuedAppend* member : group) window = std::max(window, member->request.dedupe_window);
  if (!loaded_) {
    if (absl::Status loaded = LoadLocked(window); !loaded.ok()) return fail_pending(loaded);
  }
  bool fresh = false;  // Whether the tip was read from the server during this commit.
  for (int round = 0; round < kMaxRounds; ++round) {
    const absl::Time now = env_.clock.Now();
    // Plan each publish against the stream and the publishes before it in
    // the group; a refused one leaves the group.
    uint64_t next = tip_.header.next();
    absl::Time last_time = tip_.header.last_time;
    absl::flat_hash_map<std::string, DedupeHit> staged_keys;
    std::vector<Event> batch;
    bool stale = false;
    std::vector<QueuedAppend*> planned_members;
    for (QueuedAppend* member : pending) {
      absl::StatusOr<AppendPlan> plan =
          PlanAppend(member->events, member->request, next - 1,
                     [&](absl::string_view key) -> std::optional<DedupeHit> {
                       if (auto it = staged_keys.find(key); it != staged_keys.end()) {
                         return it->second;
                       }
                       return keys_.Find(key, now);
                     });
      if (!plan.ok()) {
        // A conflict against what this daemon last saw may be out of date:
        // read the stream once before answering it.
        if (GetErrorKind(plan.status()) == ErrorKind::kConflict && !fresh) {
          stale = true;
          break;
        }
        member->result = plan.status();
        continue;
      }
      member->planned = member->events;
      for (size_t i : plan->append) {
        Event& event = member->planned[i];
        // The clock stepped back, or another daemon's clock runs ahead:
        // keep times non-decreasing within the stream.
        if (event.time < last_time) event.time = last_time;
        last_time = event.time;
        event.sequence = next++;
        if (event.idempotency_key && member->request.dedupe_window > absl::ZeroDuration()) {
          staged_keys.emplace(*event.idempotency_key, DedupeHit{event.sequence, event.id});
        }
        batch.push_back(event);
      }
      member->plan = *std::move(plan);
      planned_members.push_back(member);
    }
    if (stale) {
      if (absl::Status read = RefreshLocked(window, "").status(); !read.ok()) {
        return fail_pending(read);
      }
      fresh = true;
      continue;
    }
    pending = planned_members;
    if (batch.empty()) {
      for (QueuedAppend* member : pending) {
        AppendResult result;
        result.receipts = PlannedReceipts(*member->plan, member->planned, stream_, env_.epoch);
        result.next_key_expiry = keys_.NextExpiry();
        member->result = std::move(result);
      }
      return;
    }
    const RecordHeader header = AppendedHeader(tip_.header, batch);
    absl::StatusOr<bool> stored = ClaimNextLocked(header, EncodeRecordEvents(batch), window);
    if (!stored.ok()) {
      if (absl::IsResourceExhausted(stored.status()) && pending.size() > 1) {
        // Together they do not fit one record: one record each.
        for (QueuedAppend* member : pending) CommitLocked({member});
        return;
      }
      return fail_pending(stored.status());
    }
    fresh = true;
    if (!*stored) continue;  // Plan again against what the other writers appended.
    // A claim found stored after an unknown outcome was folded with its
    // keys already; remembering them again changes nothing.
    for (QueuedAppend* member : pending) {
      const absl::Duration member_window = member->request.dedupe_window;
      for (size_t i : member->plan->append) {
        const Event& event = member->planned[i];
        if (event.idempotency_key && member_window > absl::ZeroDuration()) {
          keys_.Remember(*event.idempotency_key, DedupeHit{event.sequence, event.id},
                         event.time + member_window);
        }
      }
    }
    const WrittenRecord written{tip_.js_seq, tip_.header};
    WrittenRecord trimmed;
    if (env_.max_events_per_stream > 0 &&
        tip_.header.bounds().count() > env_.max_events_per_stream) {
      RetentionLimits cap;
      cap.max_events = env_.max_events_per_stream;
      // The events are stored whatever the trim does: a trim that fails
      // here is made by the next append.
      absl::StatusOr<TrimResult> cut = TrimLocked(cap, now, UINT64_MAX, window);
      if (cut.ok()) trimmed = cut->written;
    }
    for (QueuedAppend* member : pending) {
      AppendResult result;
      result.receipts = PlannedReceipts(*member->plan, member->planned, stream_, env_.epoch);
      result.written = written;
      result.trimmed = trimmed;
      result.next_key_expiry = keys_.NextExpiry();
      member->result = std::move(result);
    }
    return;
  }
  fail_pending(Unavailable(absl::StrCat("jetstream: stream '", stream_, "': lost ", kMaxRounds,
                                        " conditional publishes in a row")));
}

absl::StatusOr<TrimResult> StreamWriter::Trim(const RetentionLimits& limits, absl::Time now,
                                              uint64_t budget, absl::Duration window) {
  MutexLock lock(&mu_);
  if (!loaded_) {
    KEEL_RETURN_IF_ERROR(LoadLocked(window));
  } else {
    KEEL_RETURN_IF_ERROR(RefreshLocked(window, "").status());
  }
  return TrimLocked(limits, now, budget, window);
}

absl::StatusOr<TrimResult> StreamWriter::TrimLocked(const RetentionLimits& limits, absl::Time now,
                                                    uint64_t budget, absl::Duration window) {
  TrimResult result;
  for (int round = 0; round < kMaxRounds; ++round) {
    const LogBounds bounds = tip_.header.bounds();
    if (tip_.js_seq == 0 ||
        !limits.Exceeded(bounds.count(), bounds.bytes, bounds.oldest_time, now)) {
      return result;
    }
    TrimReadView view(env_.reader, tip_);
    absl::StatusOr<LogTrim> planned = PlanLogTrim(view, stream_, bounds, limits, now, budget);
    if (absl::IsAborted(planned.status())) {
      // Another daemon trimmed meanwhile: its marker is what moved.
      KEEL_RETURN_IF_ERROR(RefreshLocked(window, "").status());
      continue;
    }
    KEEL_RETURN_IF_ERROR(planned.status());
    const LogTrim& cut = *planned;
    if (cut.events() == 0) return result;
    RecordHeader marker = tip_.header;
    marker.seq = tip_.header.next();
    marker.count = 0;
    marker.keyed = 0;
    marker.first = cut.new_first;
    marker.first_bytes = tip_.header.first_bytes + cut.bytes;
    const bool keeps_events = cut.new_first < marker.seq;
    marker.first_time = keeps_events ? cut.new_oldest : absl::InfinitePast();
    const uint64_t keep_record = keeps_events ? view.stop_record() : 0;
    KEEL_ASSIGN_OR_RETURN(bool stored, ClaimNextLocked(marker, "", window));
    if (!stored) continue;  // Another writer moved the stream: plan again.
    result.events = cut.events();
    result.bytes = cut.bytes;
    result.written = WrittenRecord{tip_.js_seq, tip_.header};
    // The marker already took the events out of the stream; the purge only
    // frees their space, and a failed one is repeated by the next trim
    // (which purges everything below its own cut).
    if (keeps_events && keep_record == 0) return result;  // Nothing known to purge below.
    const uint64_t purge_below = keeps_events ? keep_record : tip_.js_seq;
    result.purge = env_.api.Purge(subject_, purge_below);
    return result;
  }
  return Unavailable(absl::StrCat("jetstream: stream '", stream_, "': lost ", kMaxRounds,
                                  " trim markers in a row"));
}

size_t StreamWriter::CollectKeys(absl::Time now) {
  MutexLock lock(&mu_);
  return keys_.CollectExpired(now);
}

absl::Time StreamWriter::NextKeyExpiry() {
  MutexLock lock(&mu_);
  return keys_.NextExpiry();
}

}  // namespace keel::jetstream
