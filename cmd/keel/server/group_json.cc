#include "keel/cmd/keel/server/group_json.h"

#include <boost/json.hpp>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/json_codec.h"
#include "keel/cmd/keel/server/json_fields.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::server {
namespace json = boost::json;
namespace {

// The body as an object whose members are all in `known`; {} when empty.
absl::StatusOr<json::object> ParseObject(absl::string_view body,
                                         std::initializer_list<absl::string_view> known) {
  if (body.empty()) return json::object();
  boost::system::error_code error;
  json::value root = json::parse(json::string_view(body.data(), body.size()), error);
  if (error) return InvalidArgument(absl::StrCat("request body is not JSON: ", error.message()));
  if (!root.is_object()) return InvalidArgument("the request body must be a JSON object");
  for (const auto& [key, unused] : root.get_object()) {
    const absl::string_view name(key.data(), key.size());
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return InvalidArgument(absl::StrCat("unknown field '", name, "'"));
    }
  }
  return std::move(root.get_object());
}

std::string Quoted(const Cursor& cursor) { return absl::StrCat("\"", cursor.Encode(), "\""); }

std::string LeaseJson(const GroupLease& lease) {
  return absl::StrCat("{\"token\":", lease.token, ",\"expires\":\"",
                      FormatRfc3339(lease.expires), "\",\"from\":", Quoted(lease.from),
                      ",\"to\":", Quoted(lease.to), "}");
}

}  // namespace

absl::StatusOr<ConsumeRequest> ParseConsumeBody(absl::string_view body) {
  KEEL_ASSIGN_OR_RETURN(json::object object, ParseObject(body, {"limit", "leaseMs", "start"}));
  ConsumeRequest request;
  KEEL_ASSIGN_OR_RETURN(std::optional<uint64_t> limit, OptionalJsonUint(object, "limit"));
  if (limit) request.limit = *limit;
  KEEL_ASSIGN_OR_RETURN(std::optional<uint64_t> lease_ms, OptionalJsonUint(object, "leaseMs"));
  if (lease_ms) request.lease = absl::Milliseconds(std::min<uint64_t>(*lease_ms, INT64_MAX / 2));
  KEEL_ASSIGN_OR_RETURN(std::optional<std::string> start, OptionalJsonString(object, "start"));
  if (start && *start == "latest") {
    request.start = ConsumeRequest::Start::kLatest;
  } else if (start && *start != "earliest") {
    return InvalidArgument("start must be \"earliest\" or \"latest\"");
  }
  return request;
}

absl::StatusOr<CommitBody> ParseCommitBody(absl::string_view body) {
  KEEL_ASSIGN_OR_RETURN(json::object object, ParseObject(body, {"cursor", "token"}));
  KEEL_ASSIGN_OR_RETURN(std::optional<std::string> cursor, OptionalJsonString(object, "cursor"));
  KEEL_ASSIGN_OR_RETURN(std::optional<uint64_t> token, OptionalJsonUint(object, "token"));
  if (!cursor || !token) return InvalidArgument("a commit needs \"cursor\" and \"token\"");
  CommitBody out;
  KEEL_ASSIGN_OR_RETURN(out.cursor, Cursor::Decode(*cursor));
  out.token = *token;
  return out;
}

absl::StatusOr<SeekBody> ParseSeekBody(absl::string_view body) {
  KEEL_ASSIGN_OR_RETURN(json::object object, ParseObject(body, {"to", "time"}));
  KEEL_ASSIGN_OR_RETURN(std::optional<std::string> to, OptionalJsonString(object, "to"));
  KEEL_ASSIGN_OR_RETURN(std::optional<std::string> time, OptionalJsonString(object, "time"));
  if (to.has_value() == time.has_value()) {
    return InvalidArgument("a seek needs either \"to\" or \"time\"");
  }
  SeekBody out;
  if (to) {
    KEEL_ASSIGN_OR_RETURN(out.to, Position::Parse(*to));
    return out;
  }
  KEEL_ASSIGN_OR_RETURN(out.time, ParseRfc3339(*time, "time"));
  return out;
}

std::string ConsumePageJson(const ConsumePage& page, absl::string_view stream, uint64_t epoch) {
  std::string out = "{\"events\":[";
  for (size_t i = 0; i < page.events.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendEventJson(page.events[i], epoch, out);
  }
  absl::StrAppend(&out, "],\"lease\":", page.lease.token == 0 ? "null" : LeaseJson(page.lease));
  if (page.busy_until) {
    absl::StrAppend(&out, ",\"busyUntil\":\"", FormatRfc3339(*page.busy_until), "\"");
  }
  if (page.gap) {
    absl::StrAppend(&out, ",\"gap\":{\"requested\":",
                    Quoted(Cursor::For(stream, epoch, page.gap->requested_after)),
                    ",\"oldestSequence\":", page.gap->oldest, ",\"missed\":", page.gap->missed(),
                    "}");
  }
  out.push_back('}');
  return out;
}

std::string GroupInfoJson(const GroupInfo& info) {
  std::string out = absl::StrCat(
      "{\"stream\":", JsonString(info.stream), ",\"group\":", JsonString(info.group),
      ",\"cursor\":", Quoted(info.cursor), ",\"committedSequence\":", info.cursor.sequence,
      ",\"lag\":", info.lag, ",\"lastToken\":", info.last_token);
  if (info.lease) absl::StrAppend(&out, ",\"lease\":", LeaseJson(*info.lease));
  out.push_back('}');
  return out;
}

std::string GroupListJson(const std::vector<GroupInfo>& infos) {
  std::string out = "{\"groups\":[";
  for (size_t i = 0; i < infos.size(); ++i) {
    if (i > 0) out.push_back(',');
    out += GroupInfoJson(infos[i]);
  }
  out += "]}";
  return out;
}

std::string DeadLetterJson(const DeadLetter& letter, uint64_t epoch) {
  std::string out = absl::StrCat(
      "{\"sequence\":", letter.cursor.sequence, ",\"cursor\":", Quoted(letter.cursor),
      ",\"sourceStream\":", JsonString(letter.source_stream),
      ",\"sourceSequence\":", letter.source_sequence, ",\"sourceId\":",
      JsonString(letter.source_id), ",\"group\":", JsonString(letter.group),
      ",\"reason\":", JsonString(letter.reason), ",\"attempts\":", letter.attempts,
      ",\"event\":");
  AppendEventJson(letter.event, epoch, out);
  out.push_back('}');
  return out;
}

std::string DeadLetterPageJson(const DeadLetterPage& page, uint64_t epoch) {
  std::string out = "{\"deadLetters\":[";
  for (size_t i = 0; i < page.letters.size(); ++i) {
    if (i > 0) out.push_back(',');
    out += DeadLetterJson(page.letters[i], epoch);
  }
  absl::StrAppend(&out, "],\"next\":", Quoted(page.next),
                  ",\"reachedEnd\":", page.reached_end ? "true" : "false", "}");
  return out;
}

}  // namespace keel::server
