#include "keel/cmd/keel/export/http_export_source.h"

#include <boost/json.hpp>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/client/errors.h"
#include "keel/cmd/keel/client/raw_json.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::lakehouse {
namespace {

namespace json = boost::json;

// The most streams one listing returns (rfcs/0004-http-api.md).
constexpr size_t kMaxListed = 100'000;

// The daemon's error as the bus's kind, for the codes an export acts on.
absl::Status Typed(const absl::Status& status) {
  std::optional<client::HttpError> error = client::GetHttpError(status);
  if (!error) return status;
  const std::string message = client::DescribeError(status);
  if (error->code == "retention_gap") return MakeError(ErrorKind::kRetentionGap, message);
  if (error->code == "cursor_mismatch") return CursorMismatch(message);
  if (error->code == "not_found") return NotFound(message);
  return status;
}

absl::Status Malformed(absl::string_view what, absl::string_view body) {
  return absl::InternalError(
      absl::StrCat("unexpected ", what, " from the daemon: ", body.substr(0, 200)));
}

const json::object* ParseObject(const std::string& body, json::value& root) {
  boost::system::error_code ec;
  root = json::parse(body, ec);
  return !ec && root.is_object() ? &root.get_object() : nullptr;
}

absl::StatusOr<ExportRow> RowOf(const json::value& event, absl::string_view raw) {
  const json::object* object = event.if_object();
  const json::value* sequence = object ? object->if_contains("sequence") : nullptr;
  const json::value* cursor = object ? object->if_contains("cursor") : nullptr;
  const json::value* time = object ? object->if_contains("time") : nullptr;
  if (!sequence || !sequence->is_uint64() && !sequence->is_int64() || !cursor ||
      !cursor->is_string() || !time || !time->is_string()) {
    return Malformed("event", raw);
  }
  ExportRow row;
  row.sequence = sequence->to_number<uint64_t>();
  row.cursor = std::string(cursor->get_string());
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, std::string(time->get_string()), &row.time, &error)) {
    return Malformed("event time", raw);
  }
  row.json = std::string(raw);
  return row;
}

}  // namespace

absl::StatusOr<std::string> HttpExportSource::Get(const std::string& target) {
  KEEL_ASSIGN_OR_RETURN(client::ClientResponse response, http_.Get(target));
  if (absl::Status error = client::ErrorFromResponse(response); !error.ok()) return Typed(error);
  return std::move(response.body);
}

absl::StatusOr<std::vector<std::string>> HttpExportSource::ListStreams(absl::string_view prefix) {
  KEEL_ASSIGN_OR_RETURN(
      std::string body,
      Get(client::BuildTarget({"v1", "streams"}, {{"prefix", std::string(prefix)},
                                                  {"limit", absl::StrCat(kMaxListed)}})));
  json::value root;
  const json::object* object = ParseObject(body, root);
  const json::value* streams = object ? object->if_contains("streams") : nullptr;
  if (!streams || !streams->is_array()) return Malformed("stream list", body);
  std::vector<std::string> names;
  for (const json::value& info : streams->get_array()) {
    const json::value* name = info.is_object() ? info.get_object().if_contains("stream") : nullptr;
    if (!name || !name->is_string()) return Malformed("stream list", body);
    names.emplace_back(name->get_string());
  }
  return names;
}

absl::StatusOr<ExportPage> HttpExportSource::Read(absl::string_view stream,
                                                  const std::optional<std::string>& after,
                                                  size_t limit) {
  KEEL_ASSIGN_OR_RETURN(std::string body,
                        Get(client::BuildTarget({"v1", "streams", std::string(stream), "events"},
                                                {{"after", after.value_or("earliest")},
                                                 {"limit", absl::StrCat(limit)}})));
  json::value root;
  const json::object* object = ParseObject(body, root);
  const json::value* events = object ? object->if_contains("events") : nullptr;
  const json::value* end = object ? object->if_contains("reachedEnd") : nullptr;
  const json::value* head = object ? object->if_contains("headSequence") : nullptr;
  std::optional<absl::string_view> raw_events = client::RawMember(body, "events");
  if (!events || !events->is_array() || !end || !end->is_bool() || !head || !head->is_number() ||
      !raw_events) {
    return Malformed("replay page", body);
  }
  const std::vector<absl::string_view> raw = client::RawElements(*raw_events);
  const json::array& parsed = events->get_array();
  if (raw.size() != parsed.size()) return Malformed("replay page", body);
  ExportPage page;
  page.reached_end = end->get_bool();
  page.head_sequence = head->to_number<uint64_t>();
  page.rows.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    KEEL_ASSIGN_OR_RETURN(ExportRow row, RowOf(parsed[i], raw[i]));
    page.rows.push_back(std::move(row));
  }
  return page;
}

absl::StatusOr<std::optional<std::string>> HttpExportSource::Checkpoint(absl::string_view stream,
                                                                        absl::string_view group) {
  absl::StatusOr<std::string> body = Get(
      client::BuildTarget({"v1", "streams", std::string(stream), "groups", std::string(group)}));
  if (!body.ok() && GetErrorKind(body.status()) == ErrorKind::kNotFound) return std::nullopt;
  KEEL_RETURN_IF_ERROR(body.status());
  json::value root;
  const json::object* object = ParseObject(*body, root);
  const json::value* cursor = object ? object->if_contains("cursor") : nullptr;
  const json::value* committed = object ? object->if_contains("committedSequence") : nullptr;
  if (!cursor || !cursor->is_string() || !committed || !committed->is_number()) {
    return Malformed("group", *body);
  }
  if (committed->to_number<uint64_t>() == 0) return std::nullopt;
  return std::string(cursor->get_string());
}

absl::Status HttpExportSource::SetCheckpoint(absl::string_view stream, absl::string_view group,
                                             absl::string_view cursor) {
  KEEL_ASSIGN_OR_RETURN(
      client::ClientResponse response,
      http_.PostJson(client::BuildTarget({"v1", "streams", std::string(stream), "groups",
                                          absl::StrCat(group, ":seek")}),
                     absl::StrCat("{\"to\":\"", cursor, "\"}")));
  return Typed(client::ErrorFromResponse(response));
}

}  // namespace keel::lakehouse
