#include "keel/drivers/durable/cold_tier.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "keel/coldstore/segment/segment.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"
#include "keel/drivers/durable/trim.h"

namespace keel::durable {
namespace {

EntryCheck EntryCheckOf(StoreFormat format) {
  return format == StoreFormat::kCrc32c ? EntryCheck::kCrc32c : EntryCheck::kFnv1a;
}

// The segment holding `sequence`, or null.
const ColdSegment* Holding(const ColdSegments& segments, uint64_t sequence) {
  auto it =
      std::upper_bound(segments.begin(), segments.end(), sequence,
                       [](uint64_t s, const ColdSegment& segment) { return s < segment.first; });
  if (it == segments.begin()) return nullptr;
  --it;
  return sequence <= it->last ? &*it : nullptr;
}

bool StillLive(const ColdSegments& segments, const ColdSegment& segment) {
  const ColdSegment* now = Holding(segments, segment.first);
  return now != nullptr && now->object == segment.object;
}

}  // namespace

absl::StatusOr<ColdRecords> ReadColdRecords(StateStore& store) {
  ColdRecords records;
  {
    std::unique_ptr<StoreIterator> it = store.NewIterator(ColdSummaryRange());
    for (it->Seek(ColdSummaryRange().start); it->Valid(); it->Next()) {
      KEEL_ASSIGN_OR_RETURN(ColdSummary summary, DecodeColdSummary(it->key(), it->value()));
      records.summaries.emplace(StreamOfNameKey(it->key()), summary);
    }
    KEEL_RETURN_IF_ERROR(it->status());
  }
  {
    std::unique_ptr<StoreIterator> it = store.NewIterator(TierIntentRange());
    for (it->Seek(TierIntentRange().start); it->Valid(); it->Next()) {
      KEEL_ASSIGN_OR_RETURN(ColdSegment intent, DecodeColdSegment(it->key(), it->value()));
      records.intents.emplace(StreamOfNameKey(it->key()), std::move(intent));
    }
    KEEL_RETURN_IF_ERROR(it->status());
  }
  std::unique_ptr<StoreIterator> it = store.NewIterator(RetiringSegmentRange());
  for (it->Seek(RetiringSegmentRange().start); it->Valid(); it->Next()) {
    KEEL_ASSIGN_OR_RETURN(absl::string_view stream, StreamOfNumberKey(it->key()));
    KEEL_ASSIGN_OR_RETURN(ColdSegment segment, DecodeColdSegment(it->key(), it->value()));
    records.retiring.emplace_back(std::string(stream), std::move(segment));
  }
  KEEL_RETURN_IF_ERROR(it->status());
  return records;
}

ColdTier::ColdTier(StateStore& store, StoreFormat format, const ColdOptions& options,
                   Logger& logger, TierHost& host, ColdRecords records)
    : store_(store),
      format_(format),
      options_(options),
      logger_(logger),
      host_(host),
      index_(store, std::move(records.summaries)),
      cache_(2 * options.segment_bytes),
      intents_(std::move(records.intents)),
      retiring_(std::move(records.retiring)) {}

ColdStats ColdTier::Stats() const {
  ColdStats stats;
  stats.segments = index_.TotalSegments();
  stats.object_bytes = index_.TotalObjectBytes();
  stats.uploads = uploads_.load();
  stats.upload_failures = upload_failures_.load();
  stats.cold_reads = cold_reads_.load();
  stats.expired_segments = expired_segments_.load();
  MutexLock lock(&mu_);
  stats.paused = outage_;
  return stats;
}

bool ColdTier::HasPendingWork() const {
  MutexLock lock(&mu_);
  return !intents_.empty() || !retiring_.empty();
}

void ColdTier::ColdStoreFailed(const absl::Status& status, absl::string_view what) {
  MutexLock lock(&mu_);
  if (outage_) return;  // Said once per outage; the metric counts each.
  outage_ = true;
  logger_.Warn(absl::StrCat("durable: cold store ", options_.store->Describe(), " failed (", what,
                            "): tiering pauses and hot windows grow past their bounds until it "
                            "answers again: ",
                            status.ToString()));
}

void ColdTier::ColdStoreWorked() {
  MutexLock lock(&mu_);
  if (!outage_) return;
  outage_ = false;
  logger_.Info(absl::StrCat("durable: cold store ", options_.store->Describe(),
                            " answers again: tiering resumes"));
}

absl::StatusOr<std::shared_ptr<const SegmentEntries>> ColdTier::EntriesFrom(
    absl::string_view stream, const ColdSegment& segment, uint64_t from) {
  if (std::shared_ptr<const SegmentEntries> cached = cache_.Find(segment.object, from)) {
    // Served from memory only while the object is still there, whole (one
    // stat on `fs`): a segment deleted or cut short behind Keel's back fails
    // as a read of it would.
    absl::StatusOr<uint64_t> size = options_.store->Size(segment.object);
    if (!size.ok() && GetErrorKind(size.status()) == ErrorKind::kNotFound) {
      return absl::DataLossError(absl::StrCat("is missing from ", options_.store->Describe()));
    }
    KEEL_RETURN_IF_ERROR(size.status());
    if (*size != segment.object_bytes) {
      return absl::DataLossError(absl::StrCat("holds ", *size, " bytes in ",
                                              options_.store->Describe(), ", its record says ",
                                              segment.object_bytes));
    }
    return cached;
  }
  cold_reads_.fetch_add(1);
  KEEL_ASSIGN_OR_RETURN(SegmentReader reader,
                        SegmentReader::Open(*options_.store, segment.object, segment.object_bytes));
  const SegmentHeader& header = reader.header();
  if (header.first != segment.first || header.last != segment.last || header.stream != stream) {
    return absl::DataLossError(
        absl::StrCat("cold segment ", segment.object, " in ", options_.store->Describe(), " holds ",
                     header.stream, " [", header.first, ", ", header.last, "], its record says [",
                     segment.first, ", ", segment.last, "]"));
  }
  KEEL_ASSIGN_OR_RETURN(std::vector<SegmentEntry> read, reader.ReadFrom(from));
  if (read.empty() || read.front().sequence != from) {
    return absl::DataLossError(absl::StrCat("gave no event ", from));
  }
  auto entries = std::make_shared<SegmentEntries>();
  entries->entries = std::move(read);
  for (const SegmentEntry& entry : entries->entries) entries->bytes += entry.value.size();
  cache_.Insert(segment.object, entries);
  return entries;
}

absl::StatusOr<uint64_t> ColdTier::ReadFrom(absl::string_view stream, uint64_t from, uint64_t to,
                                            uint64_t hot_first, ReadSink& sink, bool& stopped) {
  stopped = false;
  KEEL_ASSIGN_OR_RETURN(std::shared_ptr<const ColdSegments> segments, index_.SegmentsOf(stream));
  if (segments->empty()) {
    // Every segment expired since the caller read `hot_first` (the hot
    // read finds out whether the hot window moved too).
    return std::max(from, hot_first);
  }
  if (from > segments->back().last) {
    if (from >= hot_first) return from;
    // Segments are made live before the hot head moves past them, and the
    // caller read the head first: nothing can be between them.
    return absl::DataLossError(absl::StrCat(
        "stream '", stream, "': event ", from, " is neither hot nor in a cold segment (the last ",
        segments->back().object, " ends at ", segments->back().last, ")"));
  }
  if (from < segments->front().first) return segments->front().first;  // Expired.
  const ColdSegment* segment = Holding(*segments, from);
  if (segment == nullptr) {
    return absl::DataLossError(
        absl::StrCat("stream '", stream, "': event ", from, " is in no cold segment"));
  }
  absl::StatusOr<std::shared_ptr<const SegmentEntries>> entries =
      EntriesFrom(stream, *segment, from);
  if (!entries.ok()) {
    // Expired and deleted while this read ran: the events are gone by
    // retention, which the caller's bounds explain.
    KEEL_ASSIGN_OR_RETURN(std::shared_ptr<const ColdSegments> now, index_.SegmentsOf(stream));
    if (!StillLive(*now, *segment)) return now->empty() ? hot_first : now->front().first;
    if (entries.status().code() == absl::StatusCode::kUnavailable ||
        GetErrorKind(entries.status()) == ErrorKind::kUnavailable) {
      return absl::UnavailableError(absl::StrCat("stream '", stream, "': cold segment ",
                                                 segment->object, ": ",
                                                 entries.status().message()));
    }
    return absl::DataLossError(absl::StrCat("stream '", stream, "': cold segment ", segment->object,
                                            ": ", entries.status().message()));
  }
  const SegmentEntries& held = **entries;
  uint64_t next = from;
  for (size_t i = from - held.first(); i < held.entries.size(); ++i) {
    const SegmentEntry& entry = held.entries[i];
    if (entry.sequence != next) {
      return absl::DataLossError(absl::StrCat("stream '", stream, "': cold segment ",
                                              segment->object, " gave event ", entry.sequence,
                                              " where ", next, " was due"));
    }
    if (next > to) return next;
    absl::Status decoded =
        DecodeEntryInto(stream, entry.sequence, entry.value, format_, sink.Slot());
    if (!decoded.ok()) {
      return absl::DataLossError(absl::StrCat("stream '", stream, "': cold segment ",
                                              segment->object, ", event ", entry.sequence, ": ",
                                              decoded.message()));
    }
    ++next;
    if (!sink.Take()) {
      stopped = true;
      return next;
    }
  }
  if (next != segment->last + 1) {
    return absl::DataLossError(absl::StrCat("stream '", stream, "': cold segment ", segment->object,
                                            " ends at event ", next - 1, "; its record says ",
                                            segment->last));
  }
  return next;
}

absl::StatusOr<ColdSegments> ColdTier::StageLive(absl::string_view stream,
                                                 const ColdSegment& segment, WriteBatch& batch) {
  KEEL_ASSIGN_OR_RETURN(std::shared_ptr<const ColdSegments> segments, index_.SegmentsOf(stream));
  if (!segments->empty() && segments->back().last + 1 != segment.first) {
    return absl::InternalError(absl::StrCat("stream '", stream, "': segment ", segment.object,
                                            " does not follow the last live one"));
  }
  ColdSegments next = *segments;
  next.push_back(segment);
  batch.Put(ColdSegmentKey(stream, segment.first), EncodeColdSegment(segment));
  batch.Delete(TierIntentKey(stream));
  batch.Put(ColdSummaryKey(stream), EncodeColdSummary(ColdIndex::Summarize(next)));
  return next;
}

absl::StatusOr<ColdTier::Expiry> ColdTier::StageExpiry(absl::string_view stream, uint64_t new_first,
                                                       WriteBatch& batch) {
  KEEL_ASSIGN_OR_RETURN(std::shared_ptr<const ColdSegments> segments, index_.SegmentsOf(stream));
  Expiry expiry;
  for (const ColdSegment& segment : *segments) {
    if (segment.last < new_first) {
      batch.Delete(ColdSegmentKey(stream, segment.first));
      batch.Put(RetiringSegmentKey(stream, segment.first), EncodeColdSegment(segment));
      expiry.event_bytes += segment.event_bytes;
      expiry.retired.push_back(segment);
    } else {
      expiry.kept.push_back(segment);
    }
  }
  if (expiry.retired.empty()) return expiry;
  if (expiry.kept.empty()) {
    batch.Delete(ColdSummaryKey(stream));
  } else {
    batch.Put(ColdSummaryKey(stream), EncodeColdSummary(ColdIndex::Summarize(expiry.kept)));
  }
  return expiry;
}

void ColdTier::Retired(absl::string_view stream, Expiry expiry) {
  MutexLock lock(&mu_);
  for (ColdSegment& segment : expiry.retired) retiring_.emplace_back(stream, std::move(segment));
}

absl::Status ColdTier::Recover() {
  absl::flat_hash_map<std::string, ColdSegment> intents;
  std::vector<std::pair<std::string, ColdSegment>> retiring;
  {
    MutexLock lock(&mu_);
    intents = intents_;
    retiring = retiring_;
  }
  absl::Status status;
  for (const auto& [stream, intent] : intents) status.Update(ResolveIntent(stream, intent));
  for (const auto& [stream, segment] : retiring) status.Update(Retire(stream, segment));
  return status;
}

absl::Status ColdTier::RollBack(absl::string_view stream, const ColdSegment& intent,
                                bool delete_object) {
  if (delete_object) {
    // First: an object left by a rolled-back intent would be an orphan,
    // and a corrupt one would keep its name from a new upload.
    absl::Status deleted = options_.store->Delete(intent.object);
    if (!deleted.ok()) {
      ColdStoreFailed(deleted, absl::StrCat("deleting ", intent.object));
      return deleted;
    }
  }
  WriteBatch batch;
  batch.Delete(TierIntentKey(stream));
  KEEL_RETURN_IF_ERROR(store_.Write(batch, WriteOptions{.sync = true}));
  MutexLock lock(&mu_);
  intents_.erase(stream);
  return absl::OkStatus();
}

absl::Status ColdTier::ResolveIntent(absl::string_view stream, const ColdSegment& intent) {
  KEEL_ASSIGN_OR_RETURN(Head head, host_.HotHead(stream));
  if (head.first != intent.first || head.next <= intent.last) {
    // A retention trim took the entries since: nothing to finish.
    return RollBack(stream, intent, /*delete_object=*/true);
  }
  absl::StatusOr<std::string> bytes = options_.store->Read(intent.object);
  if (!bytes.ok() && GetErrorKind(bytes.status()) == ErrorKind::kNotFound) {
    return RollBack(stream, intent, /*delete_object=*/false);  // Never uploaded.
  }
  if (!bytes.ok()) {
    ColdStoreFailed(bytes.status(), absl::StrCat("reading ", intent.object));
    return bytes.status();
  }
  absl::StatusOr<DecodedSegment> decoded = DecodeSegment(*bytes, intent.object);
  if (!decoded.ok() || decoded->header.first != intent.first ||
      decoded->header.last != intent.last || decoded->header.stream != stream ||
      bytes->size() != intent.object_bytes) {
    logger_.Warn(absl::StrCat("durable: stream '", stream, "': cold segment ", intent.object,
                              " of an unfinished tiering does not check (",
                              decoded.ok() ? "another range" : decoded.status().message(),
                              "); deleted, its events stay hot"));
    return RollBack(stream, intent, /*delete_object=*/true);
  }
  absl::Status committed = host_.CommitTiered(stream, intent);
  if (committed.code() == absl::StatusCode::kAborted) {
    return RollBack(stream, intent, /*delete_object=*/true);
  }
  KEEL_RETURN_IF_ERROR(committed);
  uploads_.fetch_add(1);
  MutexLock lock(&mu_);
  intents_.erase(stream);
  return absl::OkStatus();
}

absl::Status ColdTier::Retire(absl::string_view stream, const ColdSegment& segment) {
  absl::Status deleted = options_.store->Delete(segment.object);
  if (!deleted.ok()) {
    ColdStoreFailed(deleted, absl::StrCat("deleting ", segment.object));
    return deleted;
  }
  KEEL_RETURN_IF_ERROR(Fault(TierStep::kObjectDeleted, stream));
  WriteBatch batch;
  batch.Delete(RetiringSegmentKey(stream, segment.first));
  KEEL_RETURN_IF_ERROR(store_.Write(batch, WriteOptions{.sync = false}));
  expired_segments_.fetch_add(1);
  MutexLock lock(&mu_);
  auto it = std::find_if(retiring_.begin(), retiring_.end(), [&](const auto& r) {
    return r.first == stream && r.second.object == segment.object;
  });
  if (it != retiring_.end()) retiring_.erase(it);
  return absl::OkStatus();
}

absl::StatusOr<TierReport> ColdTier::Maintain(
    const std::vector<std::string>& streams,
    const std::function<RetentionLimits(absl::string_view)>& hot_of, absl::Time now,
    uint64_t budget) {
  TierReport report;
  KEEL_RETURN_IF_ERROR(Recover());
  for (const std::string& stream : streams) {
    const RetentionLimits hot = hot_of(stream);
    if (hot.unbounded()) continue;
    bool within = false;
    while (!within) {
      if (report.events >= budget) {
        report.more = true;
        return report;
      }
      KEEL_RETURN_IF_ERROR(TierOne(stream, hot, now, budget - report.events, report, within));
    }
  }
  bool sweep = false;
  {
    MutexLock lock(&mu_);
    sweep = now - last_sweep_ >= options_.orphan_sweep_interval;
    if (sweep) last_sweep_ = now;
  }
  if (sweep) KEEL_RETURN_IF_ERROR(SweepOrphans(now));
  return report;
}

absl::Status ColdTier::TierOne(absl::string_view stream, const RetentionLimits& hot, absl::Time now,
                               uint64_t budget, TierReport& report, bool& within) {
  KEEL_ASSIGN_OR_RETURN(Head head, host_.HotHead(stream));
  within = !hot.Exceeded(head.count(), head.bytes, head.oldest_time, now);
  if (within) return absl::OkStatus();
  const uint64_t most = std::min<uint64_t>(budget, options_.segment_events);
  uint64_t past_bound = 0;  // The first sequence within the hot bound, or `most` past the first.
  if (hot.max_age == absl::ZeroDuration() && hot.max_bytes == 0) {
    // A count bound alone says how many go without reading an entry (a
    // plan decodes each, which cost a quarter of a tiering pass).
    past_bound = head.first + std::min(most, head.count() - std::min(head.count(), hot.max_events));
  } else {
    KEEL_ASSIGN_OR_RETURN(TrimPlan plan, PlanTrim(store_, format_, stream, head, hot, now, most));
    past_bound = plan.new_first;
  }
  const uint64_t end = std::min(past_bound, host_.EpochEnd(stream, head.first));
  if (end <= head.first) {
    within = true;
    return absl::OkStatus();
  }
  // 1. The segment, from entries that no other writer changes: the head's
  // first and those after it are immutable until this pass moves them.
  SegmentWriter writer(std::string(stream), host_.EpochOf(stream, head.first),
                       EntryCheckOf(format_));
  ColdSegment segment;
  segment.first = head.first;
  segment.epoch = host_.EpochOf(stream, head.first);
  std::unique_ptr<StoreIterator> it =
      store_.NewIterator(KeyRange{EntryKey(stream, head.first), EntryKey(stream, end)});
  uint64_t expected = head.first;
  for (it->Seek(EntryKey(stream, head.first)); it->Valid(); it->Next()) {
    KEEL_ASSIGN_OR_RETURN(uint64_t seq, EntrySequence(it->key()));
    absl::StatusOr<Event> event = DecodeEntry(stream, seq, it->value(), format_);
    if (!event.ok() || seq != expected) {
      return absl::DataLossError(absl::StrCat(
          "key ", PrintableKey(it->key()), ": not tiered: ",
          event.ok() ? absl::StrCat("event ", expected, " is missing") : event.status().message()));
    }
    KEEL_RETURN_IF_ERROR(writer.Add(seq, event->time, it->value()));
    if (seq == head.first) segment.min_time = event->time;
    segment.max_time = event->time;
    segment.event_bytes += event->ApproximateSize();
    segment.last = seq;
    ++expected;
    if (writer.ApproximateBytes() >= options_.segment_bytes) break;
  }
  KEEL_RETURN_IF_ERROR(it->status());
  it.reset();
  KEEL_ASSIGN_OR_RETURN(EncodedSegment encoded, writer.Finish());
  segment.object = encoded.object_name;
  segment.object_bytes = encoded.bytes.size();

  // 2. The intent, synced: it and every entry it names survive a crash.
  {
    WriteBatch batch;
    batch.Put(TierIntentKey(stream), EncodeColdSegment(segment));
    KEEL_RETURN_IF_ERROR(store_.Write(batch, WriteOptions{.sync = true}));
    MutexLock lock(&mu_);
    intents_[stream] = segment;
  }
  KEEL_RETURN_IF_ERROR(Fault(TierStep::kIntentWritten, stream));

  // 3. The upload; the intent stays for the next pass when it fails.
  absl::StatusOr<PutOutcome> put = options_.store->PutIfAbsent(segment.object, encoded.bytes);
  if (!put.ok()) {
    upload_failures_.fetch_add(1);
    ColdStoreFailed(put.status(), absl::StrCat("uploading ", segment.object));
    return put.status();
  }
  ColdStoreWorked();
  KEEL_RETURN_IF_ERROR(Fault(TierStep::kUploaded, stream));

  // 4. Live, and the hot entries go.
  absl::Status committed = host_.CommitTiered(stream, segment);
  if (committed.code() == absl::StatusCode::kAborted) {
    return RollBack(stream, segment, /*delete_object=*/true);
  }
  KEEL_RETURN_IF_ERROR(committed);
  {
    MutexLock lock(&mu_);
    intents_.erase(stream);
  }
  uploads_.fetch_add(1);
  ++report.segments;
  report.events += segment.count();
  return Fault(TierStep::kTiered, stream);
}

absl::Status ColdTier::SweepOrphans(absl::Time now) {
  absl::StatusOr<std::vector<ObjectInfo>> objects = options_.store->List("stream=");
  if (!objects.ok()) {
    ColdStoreFailed(objects.status(), "listing segments");
    return objects.status();
  }
  // Records after the listing: an object listed had its intent written
  // before its upload, so a record of it (intent, live or retiring) is
  // seen here unless there is none.
  absl::flat_hash_map<std::string, bool> named;
  {
    MutexLock lock(&mu_);
    for (const auto& [stream, intent] : intents_) named[intent.object] = true;
    for (const auto& [stream, segment] : retiring_) named[segment.object] = true;
  }
  std::vector<std::string> doomed;
  for (const ObjectInfo& object : *objects) {
    if (named.contains(object.name)) continue;
    absl::StatusOr<SegmentName> parsed = ParseSegmentObjectName(object.name);
    if (!parsed.ok()) continue;  // Not a segment: not ours to delete.
    KEEL_ASSIGN_OR_RETURN(std::shared_ptr<const ColdSegments> live,
                          index_.SegmentsOf(parsed->stream));
    const ColdSegment* holding = Holding(*live, parsed->first);
    if (holding != nullptr && holding->object == object.name) continue;
    MutexLock lock(&mu_);
    auto [seen, fresh] = orphans_.try_emplace(object.name, now);
    if (now - seen->second >= options_.orphan_grace) doomed.push_back(object.name);
  }
  for (const std::string& name : doomed) {
    logger_.Warn(absl::StrCat("durable: deleting orphan cold object ", name, " from ",
                              options_.store->Describe(), " (no record names it)"));
    KEEL_RETURN_IF_ERROR(options_.store->Delete(name));
    MutexLock lock(&mu_);
    orphans_.erase(name);
  }
  return absl::OkStatus();
}

}  // namespace keel::durable
