// The stored forms of collections (core/collections.h,
// rfcs/0009-collections.md): a document's record in the bus's
// MetadataStore, and its change events.
//
// Record, under "doc/<collection>/<id>":
//   "1 <version> <sequence> <deleted: 0|1> <publish time, unix ns>\n<body>"
// where <sequence> is the change event of that version.
//
// Change event on stream <collection>, type <collection>.insert|update|
// delete, content type application/json, payload
//   {"id":"<id>","version":N,"before":<JSON or null>,"after":<JSON or null>}
// and attributes keel.document (the id), keel.version, keel.previous (the
// sequence of the document's previous change, 0 for none) and
// keel.after_bytes (the length of `after`, absent for a delete), so that a
// reader walks a document's history and slices `after` without parsing.
//
// Thread safety: pure functions.
#ifndef KEEL_CORE_DOCUMENT_RECORD_H_
#define KEEL_CORE_DOCUMENT_RECORD_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/core/event.h"

namespace keel {

struct DocumentRecord {
  uint64_t version = 0;
  uint64_t sequence = 0;
  bool deleted = false;
  absl::Time time = absl::InfinitePast();
  std::string body;
};

std::string DocumentKey(absl::string_view collection, absl::string_view id);
std::string EncodeDocumentRecord(const DocumentRecord& record);
// kDataLoss naming `key` when `value` is no record.
absl::StatusOr<DocumentRecord> DecodeDocumentRecord(absl::string_view key, absl::string_view value);

// Fills `event`'s type, payload and attributes for a write of `id`.
// `before`/`after`: the document's body before and after (nullopt: none).
void FillChangeEvent(Event& event, absl::string_view collection, absl::string_view id,
                     uint64_t version, uint64_t previous_sequence,
                     const std::optional<std::string>& before,
                     const std::optional<std::string>& after);

// What a change event of document `id` says.
struct DocumentChange {
  uint64_t version = 0;
  uint64_t previous_sequence = 0;
  std::optional<std::string> after;  // nullopt: a delete.
};
// kDataLoss when `event` is no change event of `id`.
absl::StatusOr<DocumentChange> ReadDocumentChange(const Event& event, absl::string_view id);

// OK when `body` is one JSON value; kInvalidArgument saying why not.
absl::Status ValidateJsonBody(absl::string_view body);

}  // namespace keel

#endif  // KEEL_CORE_DOCUMENT_RECORD_H_
