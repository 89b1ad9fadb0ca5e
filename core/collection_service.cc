#include "keel/core/collection_service.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"
#include "keel/core/publish_validation.h"
#include "keel/core/status_macros.h"

namespace keel {
namespace {

constexpr size_t kMaxIdBytes = 255;

absl::Status ValidateDocumentId(absl::string_view id) {
  const bool valid =
      !id.empty() && id.size() <= kMaxIdBytes && std::all_of(id.begin(), id.end(), [](char c) {
        return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
               c == ':' || c == '-';
      });
  if (!valid) {
    return InvalidArgument(
        absl::StrCat("document id '", id, "' must be 1 to 255 of [A-Za-z0-9._:-]"));
  }
  return absl::OkStatus();
}

absl::Status ValidateNames(absl::string_view collection, absl::string_view id) {
  KEEL_RETURN_IF_ERROR(ValidateStreamName(collection));
  return ValidateDocumentId(id);
}

absl::Status Missing(absl::string_view collection, absl::string_view id, absl::string_view when) {
  return NotFound(absl::StrCat("collection '", collection, "' has no document '", id, "'", when));
}

}  // namespace

// One write's hook. On the publisher's thread it completes the change event
// from the document's record as it is then; at the commit point it reads
// the record again and, only if another write came between, checks and
// completes the event anew. Then it stages the record.
class CollectionService::WriteHook final : public CommitHook {
 public:
  WriteHook(CollectionService& service, absl::string_view collection, absl::string_view id,
            std::optional<std::string> body, const DocumentWriteOptions& options)
      : service_(service),
        collection_(collection),
        id_(id),
        key_(DocumentKey(collection, id)),
        body_(std::move(body)),
        options_(options) {}

  void Prepare(absl::Span<Event> events) override {
    absl::StatusOr<std::optional<DocumentRecord>> current = service_.CachedRecord(key_);
    // A refusal is Stage's to give, from the record at the commit point.
    if (!current.ok() || !Complete(events.front(), *current).ok()) return;
    prepared_from_ = Basis(*current);
  }

  absl::StatusOr<StagedEvents> Stage(absl::Span<Event> events, uint64_t incarnation_start,
                                     std::vector<LogRecord>& records) override {
    Event& event = events.front();
    KEEL_ASSIGN_OR_RETURN(std::optional<DocumentRecord> current, service_.RecordAtCommit(key_));
    // A record left by a deleted incarnation of the stream, not swept yet.
    if (current && current->sequence <= incarnation_start) current.reset();
    StagedEvents staged = StagedEvents::kAsPrepared;
    if (!prepared_from_ || *prepared_from_ != Basis(current)) {
      KEEL_RETURN_IF_ERROR(Complete(event, current));
      staged = StagedEvents::kRewritten;
    }
    const uint64_t version = current ? current->version + 1 : 1;
    written_ = DocumentRecord{version, event.sequence, !body_, event.time, body_.value_or("")};
    records.push_back(LogRecord{key_, EncodeDocumentRecord(written_)});
    service_.staged_[key_] = Staged{written_, this};
    return staged;
  }

  void Done(bool stored) override {
    if (stored) service_.cache_.Put(key_, written_);
    // Stored or not, the store and the cache now say what is true.
    auto it = service_.staged_.find(key_);
    if (it != service_.staged_.end() && it->second.by == this) service_.staged_.erase(it);
  }

  const DocumentRecord& written() const { return written_; }

 private:
  // What a completed event depends on: the record's version and change
  // event (the body is that event's `after`); {0, 0} for none.
  static std::pair<uint64_t, uint64_t> Basis(const std::optional<DocumentRecord>& record) {
    if (!record) return {0, 0};
    return {record->version, record->sequence};
  }

  // Checks the write against `current` and fills the change event.
  absl::Status Complete(Event& event, const std::optional<DocumentRecord>& current) const {
    const uint64_t version = current ? current->version : 0;
    if (options_.expected_version && *options_.expected_version != version) {
      return ConflictError(
          absl::StrCat("document '", id_, "' of collection '", collection_, "' is at version ",
                       version, ", not ", *options_.expected_version),
          ConflictInfo{*options_.expected_version, version});
    }
    const bool exists = current && !current->deleted;
    if (!body_ && !exists) return Missing(collection_, id_, "");
    std::optional<std::string> before;
    if (exists) before = current->body;
    FillChangeEvent(event, collection_, id_, version + 1, current ? current->sequence : 0, before,
                    body_);
    return absl::OkStatus();
  }

  CollectionService& service_;
  const std::string collection_;
  const std::string id_;
  const std::string key_;
  const std::optional<std::string> body_;
  const DocumentWriteOptions options_;
  std::optional<std::pair<uint64_t, uint64_t>> prepared_from_;
  DocumentRecord written_;
};

absl::StatusOr<Document> CollectionService::Put(absl::string_view collection, absl::string_view id,
                                                absl::string_view body,
                                                const DocumentWriteOptions& options) {
  KEEL_RETURN_IF_ERROR(ValidateJsonBody(body));
  return Write(collection, id, std::string(body), options);
}

absl::StatusOr<Document> CollectionService::Delete(absl::string_view collection,
                                                   absl::string_view id,
                                                   const DocumentWriteOptions& options) {
  return Write(collection, id, std::nullopt, options);
}

absl::StatusOr<Document> CollectionService::Write(absl::string_view collection,
                                                  absl::string_view id,
                                                  std::optional<std::string> body,
                                                  const DocumentWriteOptions& options) {
  KEEL_RETURN_IF_ERROR(ValidateNames(collection, id));
  Event event;
  event.stream = std::string(collection);
  event.type = absl::StrCat(collection, ".write");  // The hook names the kind.
  event.content_type = "application/json";
  // The body counts against the stream's payload limit before the hook
  // adds `before` beside it.
  event.payload = body.value_or("null");
  WriteHook hook(*this, collection, id, std::move(body), options);
  KEEL_ASSIGN_OR_RETURN(Receipt receipt, publish_(std::move(event), hook));
  const DocumentRecord& written = hook.written();
  return Document{
      std::string(collection), std::string(id), written.version, written.deleted, written.body,
      receipt.cursor,          written.time};
}

absl::StatusOr<std::optional<DocumentRecord>> CollectionService::RecordAtCommit(
    const std::string& key) {
  if (auto it = staged_.find(key); it != staged_.end()) return it->second.record;
  return CachedRecord(key);
}

absl::StatusOr<std::optional<DocumentRecord>> CollectionService::CachedRecord(
    const std::string& key) {
  if (std::optional<DocumentCache::Entry> cached = cache_.Find(key)) return *std::move(cached);
  const uint64_t evictions = cache_.evictions();
  KEEL_ASSIGN_OR_RETURN(std::optional<DocumentRecord> stored, StoredRecord(key));
  cache_.Fill(key, stored, evictions);
  return stored;
}

absl::StatusOr<std::optional<DocumentRecord>> CollectionService::StoredRecord(
    const std::string& key) {
  KEEL_ASSIGN_OR_RETURN(std::optional<std::string> value, store_.Get(key));
  if (!value) return std::nullopt;
  KEEL_ASSIGN_OR_RETURN(DocumentRecord record, DecodeDocumentRecord(key, *value));
  return record;
}

absl::StatusOr<Document> CollectionService::Get(absl::string_view collection,
                                                absl::string_view id) {
  KEEL_RETURN_IF_ERROR(ValidateNames(collection, id));
  KEEL_ASSIGN_OR_RETURN(std::optional<DocumentRecord> record,
                        StoredRecord(DocumentKey(collection, id)));
  if (!record || record->deleted) return Missing(collection, id, record ? " (deleted)" : "");
  return Document{std::string(collection),
                  std::string(id),
                  record->version,
                  false,
                  std::move(record->body),
                  Cursor::For(collection, replayer_.epoch(), record->sequence),
                  record->time};
}

absl::StatusOr<std::pair<Event, DocumentChange>> CollectionService::ReadChange(
    absl::string_view collection, absl::string_view id, uint64_t sequence) {
  ReplayRequest request;
  request.stream = std::string(collection);
  request.after = Position::After(Cursor::For(collection, replayer_.epoch(), sequence - 1));
  request.limit = 1;
  KEEL_ASSIGN_OR_RETURN(ReplayPage page, replayer_.Replay(request));
  if (page.events.empty() || page.events.front().sequence != sequence) {
    return absl::DataLossError(absl::StrCat("document '", id, "' of collection '", collection,
                                            "' names change event ", sequence,
                                            ", which its stream does not hold"));
  }
  KEEL_ASSIGN_OR_RETURN(DocumentChange change, ReadDocumentChange(page.events.front(), id));
  return std::make_pair(std::move(page.events.front()), std::move(change));
}

Document CollectionService::DocumentOf(absl::string_view collection, absl::string_view id,
                                       uint64_t sequence, const DocumentChange& change,
                                       absl::Time time) const {
  return Document{std::string(collection),
                  std::string(id),
                  change.version,
                  !change.after,
                  change.after.value_or(""),
                  Cursor::For(collection, replayer_.epoch(), sequence),
                  time};
}

absl::StatusOr<std::vector<Document>> CollectionService::History(absl::string_view collection,
                                                                 absl::string_view id) {
  KEEL_RETURN_IF_ERROR(ValidateNames(collection, id));
  KEEL_ASSIGN_OR_RETURN(std::optional<DocumentRecord> record,
                        StoredRecord(DocumentKey(collection, id)));
  if (!record) return Missing(collection, id, "");
  std::vector<Document> versions;
  for (uint64_t sequence = record->sequence; sequence != 0;) {
    KEEL_ASSIGN_OR_RETURN(auto change, ReadChange(collection, id, sequence));
    versions.push_back(DocumentOf(collection, id, sequence, change.second, change.first.time));
    sequence = change.second.previous_sequence;
  }
  std::reverse(versions.begin(), versions.end());
  return versions;
}

absl::StatusOr<Document> CollectionService::GetAt(absl::string_view collection,
                                                  absl::string_view id, const Cursor& at) {
  KEEL_RETURN_IF_ERROR(ValidateNames(collection, id));
  KEEL_ASSIGN_OR_RETURN(StreamInfo info, replayer_.Bounds(collection));
  KEEL_RETURN_IF_ERROR(CheckCursorFor(at, info, replayer_.epoch()));
  if (at.sequence > info.last_sequence) {
    return CursorMismatch(absl::StrCat("cursor at sequence ", at.sequence, " is ahead of '",
                                       collection, "' (head ", info.last_sequence, ")"));
  }
  KEEL_ASSIGN_OR_RETURN(std::optional<DocumentRecord> record,
                        StoredRecord(DocumentKey(collection, id)));
  if (!record) return Missing(collection, id, "");
  uint64_t sequence = record->sequence;
  if (sequence <= at.sequence) {
    if (record->deleted) return Missing(collection, id, " at that cursor (deleted)");
    return Document{std::string(collection),
                    std::string(id),
                    record->version,
                    false,
                    std::move(record->body),
                    Cursor::For(collection, replayer_.epoch(), sequence),
                    record->time};
  }
  while (sequence > at.sequence) {
    KEEL_ASSIGN_OR_RETURN(auto change, ReadChange(collection, id, sequence));
    sequence = change.second.previous_sequence;
  }
  if (sequence == 0) return Missing(collection, id, " at that cursor");
  KEEL_ASSIGN_OR_RETURN(auto change, ReadChange(collection, id, sequence));
  if (!change.second.after) return Missing(collection, id, " at that cursor (deleted)");
  return DocumentOf(collection, id, sequence, change.second, change.first.time);
}

absl::StatusOr<Document> CollectionService::GetAtTime(absl::string_view collection,
                                                      absl::string_view id, absl::Time time) {
  KEEL_RETURN_IF_ERROR(ValidateNames(collection, id));
  // Writes published at `time` itself count: position before the first
  // event after it.
  KEEL_ASSIGN_OR_RETURN(Position position,
                        PositionAtTime(replayer_, collection, time + absl::Nanoseconds(1)));
  if (position.kind != Position::Kind::kCursor) {
    // Every retained event is later: older writes are known only if none
    // was trimmed.
    KEEL_ASSIGN_OR_RETURN(StreamInfo info, replayer_.Bounds(collection));
    if (info.first_sequence > 1) {
      return RetentionGapError(collection, RetentionGap{0, info.first_sequence});
    }
    return Missing(collection, id, " at that time");
  }
  return GetAt(collection, id, position.cursor);
}

}  // namespace keel
