#include "keel/cmd/keel/server/document_json.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "keel/cmd/keel/server/json_codec.h"
#include "keel/core/errors.h"

namespace keel::server {

std::string DocumentJson(const Document& document) {
  std::string out = "{\"collection\":";
  AppendJsonString(document.collection, out);
  out += ",\"id\":";
  AppendJsonString(document.id, out);
  absl::StrAppend(&out, ",\"version\":", document.version,
                  ",\"deleted\":", document.deleted ? "true" : "false",
                  ",\"sequence\":", document.cursor.sequence, ",\"cursor\":\"",
                  document.cursor.Encode(), "\",\"time\":\"");
  AppendRfc3339(document.time, out);
  absl::StrAppend(&out, "\",\"doc\":", document.deleted ? "null" : document.body, "}");
  return out;
}

std::string HistoryJson(absl::string_view collection, absl::string_view id,
                        const std::vector<Document>& versions) {
  std::string out = "{\"collection\":";
  AppendJsonString(collection, out);
  out += ",\"id\":";
  AppendJsonString(id, out);
  out += ",\"versions\":[";
  for (size_t i = 0; i < versions.size(); ++i) {
    if (i > 0) out.push_back(',');
    out += DocumentJson(versions[i]);
  }
  out += "]}";
  return out;
}

absl::StatusOr<std::optional<uint64_t>> ExpectedVersion(absl::string_view if_match,
                                                        absl::string_view if_none_match) {
  if (!if_none_match.empty()) {
    if (if_none_match != "*" || !if_match.empty()) {
      return InvalidArgument(
          "If-None-Match takes only '*' (the document must not exist), "
          "and not with If-Match");
    }
    return uint64_t{0};
  }
  if (if_match.empty()) return std::nullopt;
  absl::string_view tag = if_match;
  absl::ConsumePrefix(&tag, "W/");
  if (absl::ConsumePrefix(&tag, "\"") && !absl::ConsumeSuffix(&tag, "\"")) tag = "";
  uint64_t version = 0;
  if (!absl::SimpleAtoi(tag, &version)) {
    return InvalidArgument(
        absl::StrCat("If-Match must name a document version (3 or \"3\"), got '", if_match, "'"));
  }
  return version;
}

}  // namespace keel::server
