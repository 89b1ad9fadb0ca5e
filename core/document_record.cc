#include "keel/core/document_record.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "keel/core/commit_hook.h"
#include "keel/core/errors.h"
#include "keel/core/json_syntax.h"

namespace keel {
namespace {

constexpr char kDocumentAttribute[] = "keel.document";
constexpr char kVersionAttribute[] = "keel.version";
constexpr char kPreviousAttribute[] = "keel.previous";
constexpr char kAfterBytesAttribute[] = "keel.after_bytes";

absl::Status BadChange(const Event& event, absl::string_view why) {
  return absl::DataLossError(absl::StrCat("event ", event.sequence, " of '", event.stream,
                                          "' is no change event of its document: ", why));
}

uint64_t AttributeNumber(const Event& event, const char* name, bool& ok) {
  auto it = event.attributes.find(name);
  uint64_t value = 0;
  ok = ok && it != event.attributes.end() && absl::SimpleAtoi(it->second, &value);
  return value;
}

}  // namespace

std::string DocumentKey(absl::string_view collection, absl::string_view id) {
  return absl::StrCat(StreamRecordPrefix(collection), id);
}

std::string EncodeDocumentRecord(const DocumentRecord& record) {
  return absl::StrCat("1 ", record.version, " ", record.sequence, " ", record.deleted ? 1 : 0, " ",
                      absl::ToUnixNanos(record.time), "\n", record.body);
}

absl::StatusOr<DocumentRecord> DecodeDocumentRecord(absl::string_view key,
                                                    absl::string_view value) {
  const size_t newline = value.find('\n');
  const std::vector<absl::string_view> fields = absl::StrSplit(value.substr(0, newline), ' ');
  DocumentRecord record;
  int64_t nanos = 0;
  int deleted = 0;
  if (newline == absl::string_view::npos || fields.size() != 5 || fields[0] != "1" ||
      !absl::SimpleAtoi(fields[1], &record.version) ||
      !absl::SimpleAtoi(fields[2], &record.sequence) || !absl::SimpleAtoi(fields[3], &deleted) ||
      !absl::SimpleAtoi(fields[4], &nanos)) {
    return absl::DataLossError(absl::StrCat("document record '", key, "' does not decode"));
  }
  record.deleted = deleted != 0;
  record.time = absl::FromUnixNanos(nanos);
  record.body = std::string(value.substr(newline + 1));
  return record;
}

void FillChangeEvent(Event& event, absl::string_view collection, absl::string_view id,
                     uint64_t version, uint64_t previous_sequence,
                     const std::optional<std::string>& before,
                     const std::optional<std::string>& after) {
  event.type = absl::StrCat(collection, !after ? ".delete" : before ? ".update" : ".insert");
  event.content_type = "application/json";
  // Ids are [A-Za-z0-9._:-]: nothing to escape.
  event.payload = absl::StrCat("{\"id\":\"", id, "\",\"version\":", version,
                               ",\"before\":", before.value_or("null"),
                               ",\"after\":", after.value_or("null"), "}");
  event.attributes[kDocumentAttribute] = std::string(id);
  event.attributes[kVersionAttribute] = absl::StrCat(version);
  event.attributes[kPreviousAttribute] = absl::StrCat(previous_sequence);
  if (after) event.attributes[kAfterBytesAttribute] = absl::StrCat(after->size());
}

absl::StatusOr<DocumentChange> ReadDocumentChange(const Event& event, absl::string_view id) {
  auto document = event.attributes.find(kDocumentAttribute);
  if (document == event.attributes.end() || document->second != id) {
    return BadChange(event, absl::StrCat("it is not of document '", id, "'"));
  }
  bool ok = true;
  DocumentChange change;
  change.version = AttributeNumber(event, kVersionAttribute, ok);
  change.previous_sequence = AttributeNumber(event, kPreviousAttribute, ok);
  if (!ok) return BadChange(event, "its version attributes are missing");
  if (event.attributes.contains(kAfterBytesAttribute)) {
    const uint64_t bytes = AttributeNumber(event, kAfterBytesAttribute, ok);
    // `after` ends right before the payload's closing brace.
    if (!ok || bytes + 1 > event.payload.size()) return BadChange(event, "its after is cut");
    change.after = event.payload.substr(event.payload.size() - 1 - bytes, bytes);
  }
  return change;
}

absl::Status ValidateJsonBody(absl::string_view body) {
  std::string error;
  if (!IsJsonText(body, &error)) {
    return InvalidArgument(absl::StrCat("a document must be JSON: ", error));
  }
  return absl::OkStatus();
}

}  // namespace keel
