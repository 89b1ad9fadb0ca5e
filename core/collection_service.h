// CollectionService: Collections (core/collections.h) on an engine whose
// appends run a CommitHook and store its records with their events (the
// log's StoresRecords()): records in the bus's MetadataStore, change
// events published through `publish`, history read through the Replayer.
//
// Each write is a publish of one event whose hook, at the commit point,
// reads the document's current record — as the store holds it, or as an
// earlier write of the same commit group staged it — checks the expected
// version, completes the change event and adds the new record. The hook
// completes the event on the publisher's thread first, from the record as
// it is then, so that the committing thread only redoes it when another
// write came between; and a DocumentCache spares the committing thread
// most store reads.
//
// Thread safety: as Collections. The staged records are touched only by
// hooks, on the committing thread.
#ifndef KEEL_CORE_COLLECTION_SERVICE_H_
#define KEEL_CORE_COLLECTION_SERVICE_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "keel/core/collections.h"
#include "keel/core/commit_hook.h"
#include "keel/core/document_cache.h"
#include "keel/core/document_record.h"
#include "keel/core/event_bus.h"
#include "keel/core/metadata_store.h"
#include "keel/core/replayer.h"

namespace keel {

class CollectionService final : public Collections {
 public:
  // Publishes one event whose append runs the hook at its commit point.
  using PublishWithHook = std::function<absl::StatusOr<Receipt>(Event, CommitHook&)>;

  CollectionService(MetadataStore& store, Replayer& replayer, PublishWithHook publish)
      : store_(store), replayer_(replayer), publish_(std::move(publish)) {}

  absl::StatusOr<Document> Put(absl::string_view collection, absl::string_view id,
                               absl::string_view body,
                               const DocumentWriteOptions& options) override;
  absl::StatusOr<Document> Delete(absl::string_view collection, absl::string_view id,
                                  const DocumentWriteOptions& options) override;
  absl::StatusOr<Document> Get(absl::string_view collection, absl::string_view id) override;
  absl::StatusOr<std::vector<Document>> History(absl::string_view collection,
                                                absl::string_view id) override;
  absl::StatusOr<Document> GetAt(absl::string_view collection, absl::string_view id,
                                 const Cursor& at) override;
  absl::StatusOr<Document> GetAtTime(absl::string_view collection, absl::string_view id,
                                     absl::Time time) override;

 private:
  class WriteHook;
  static constexpr size_t kCacheBytes = 64 << 20;
  struct Staged {
    DocumentRecord record;
    const WriteHook* by = nullptr;
  };

  absl::StatusOr<Document> Write(absl::string_view collection, absl::string_view id,
                                 std::optional<std::string> body,
                                 const DocumentWriteOptions& options);
  // The committed record of `key`, or the one staged in this commit group.
  absl::StatusOr<std::optional<DocumentRecord>> RecordAtCommit(const std::string& key);
  // The committed record of `key`, from the cache or the store. On a
  // publisher's thread, a write may commit right after it was read.
  absl::StatusOr<std::optional<DocumentRecord>> CachedRecord(const std::string& key);
  absl::StatusOr<std::optional<DocumentRecord>> StoredRecord(const std::string& key);
  // The change event at `sequence` of `collection`, read for document `id`.
  absl::StatusOr<std::pair<Event, DocumentChange>> ReadChange(absl::string_view collection,
                                                              absl::string_view id,
                                                              uint64_t sequence);
  Document DocumentOf(absl::string_view collection, absl::string_view id, uint64_t sequence,
                      const DocumentChange& change, absl::Time time) const;

  MetadataStore& store_;
  Replayer& replayer_;
  const PublishWithHook publish_;
  // Latest records, kept by the hooks of writes that commit.
  DocumentCache cache_{kCacheBytes};
  // Committing thread only (hooks): records staged by writes of the
  // commit group in progress, until their write is done.
  absl::flat_hash_map<std::string, Staged> staged_;
};

}  // namespace keel

#endif  // KEEL_CORE_COLLECTION_SERVICE_H_
