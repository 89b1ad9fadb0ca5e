// JSON forms of collections' documents (rfcs/0009-collections.md,
// rfcs/0004-http-api.md §15): a document, a history, and the version an
// If-Match header names.
//
// Thread safety: pure functions.
#ifndef KEEL_CMD_KEEL_SERVER_DOCUMENT_JSON_H_
#define KEEL_CMD_KEEL_SERVER_DOCUMENT_JSON_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/core/collections.h"

namespace keel::server {

// {"collection","id","version","deleted","sequence","cursor","time","doc"}:
// `doc` is the JSON as stored (null when deleted).
std::string DocumentJson(const Document& document);
// {"collection","id","versions":[<document>...]}
std::string HistoryJson(absl::string_view collection, absl::string_view id,
                        const std::vector<Document>& versions);
// The expected version of If-Match (`3`, `"3"` or `W/"3"`) or
// If-None-Match: * (0: must not exist); nullopt when neither is given.
absl::StatusOr<std::optional<uint64_t>> ExpectedVersion(absl::string_view if_match,
                                                        absl::string_view if_none_match);

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_DOCUMENT_JSON_H_
