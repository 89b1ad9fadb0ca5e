// Collections: JSON documents whose every write is also an event (an
// outbox, change data capture), and whose history is the event stream.
//
// A collection `c` keeps its documents beside its stream `c`. Each Put or
// Delete stores the document's new record and its change event —
// `c.insert`, `c.update` or `c.delete`, carrying `id`, `version`, `before`
// and `after` — in one atomic store write: a document is never stored
// without its event, nor an event without its document. `before` and the
// version are read at the commit point, in the order the bus commits
// writes, so concurrent writers never see a wrong `before`; a write whose
// `expected_version` is stale is kConflict (GetConflict: `actual` is the
// current version) and stores nothing. Versions count every write of a
// document, deletes included, from 1; a deleted document keeps its
// version, and a Put after it continues from there.
//
// A change event's cursor is the document's bookmark: GetAt(id, cursor)
// returns the document as of that event (or at a time), History every
// version in order. Both read the stream's events, so retention bounds
// them: a version that retention removed is kRetentionGap, never a partial
// answer. The change stream is an ordinary stream (replay, SSE, groups,
// exports). rfcs/0009-collections.md gives the record and event formats.
//
// Errors: kInvalidArgument (a bad collection name, id or JSON body),
// kNotFound (no such document, or deleted), kConflict, kPayloadTooLarge,
// kRetentionGap, kCursorMismatch (a cursor of another stream or store).
//
// Thread safety: every method is safe to call concurrently.
#ifndef KEEL_CORE_COLLECTIONS_H_
#define KEEL_CORE_COLLECTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/core/cursor.h"

namespace keel {

struct Document {
  std::string collection;
  std::string id;
  uint64_t version = 0;                    // Of the write that made this state; 1 for the first.
  bool deleted = false;                    // A Delete made it: `body` is empty.
  std::string body;                        // The JSON document.
  Cursor cursor;                           // The change event of that write.
  absl::Time time = absl::InfinitePast();  // Its publish time.
};

struct DocumentWriteOptions {
  // Write only if the document is at this version (0: it does not exist
  // yet, or never did); kConflict otherwise.
  std::optional<uint64_t> expected_version;
};

class Collections {
 public:
  virtual ~Collections() = default;

  // Stores `body` (a JSON value) as document `id`: an insert, or an update
  // of a document that exists. The stored document.
  virtual absl::StatusOr<Document> Put(absl::string_view collection, absl::string_view id,
                                       absl::string_view body,
                                       const DocumentWriteOptions& options) = 0;
  // Deletes document `id` (kNotFound when it does not exist); the deleted
  // state, with its version.
  virtual absl::StatusOr<Document> Delete(absl::string_view collection, absl::string_view id,
                                          const DocumentWriteOptions& options) = 0;
  // The document now; kNotFound when absent or deleted.
  virtual absl::StatusOr<Document> Get(absl::string_view collection, absl::string_view id) = 0;
  // Every version, oldest first, deletes included.
  virtual absl::StatusOr<std::vector<Document>> History(absl::string_view collection,
                                                        absl::string_view id) = 0;
  // The document as of the change event at `at` (any event of the
  // collection's stream): kNotFound when it did not exist then or was
  // deleted.
  virtual absl::StatusOr<Document> GetAt(absl::string_view collection, absl::string_view id,
                                         const Cursor& at) = 0;
  // The document as of `time`: its last write published before or at it.
  virtual absl::StatusOr<Document> GetAtTime(absl::string_view collection, absl::string_view id,
                                             absl::Time time) = 0;
};

}  // namespace keel

#endif  // KEEL_CORE_COLLECTIONS_H_
