// The collections routes of the Api (rfcs/0004-http-api.md §15): documents
// of /v1/collections/{collection}/docs/{id}, on the bus's Collections.
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/api.h"
#include "keel/cmd/keel/server/api_helpers.h"
#include "keel/cmd/keel/server/document_json.h"
#include "keel/cmd/keel/server/http_errors.h"
#include "keel/cmd/keel/server/json_codec.h"
#include "keel/cmd/keel/server/json_fields.h"

namespace keel::server {
namespace {

HttpResponse NoCollectionsResponse() {
  return ErrorResponse(501, "unimplemented",
                       "this driver keeps no collections (the durable driver with a store does)");
}

// The document's version as its ETag, so that a client sends it back as
// If-Match.
HttpResponse DocumentResponse(int status, const Document& document) {
  HttpResponse response = JsonResponse(status, DocumentJson(document));
  response.headers.emplace_back("ETag", absl::StrCat("\"", document.version, "\""));
  return response;
}

}  // namespace

HttpResponse Api::PutDocument(const HttpRequest& request, const RouteParams& params) {
  Collections* collections = bus_.collections();
  if (collections == nullptr) return NoCollectionsResponse();
  const absl::string_view collection = params.Get("stream");
  if (!absl::StartsWithIgnoreCase(request.Header("content-type"), kJsonContentType)) {
    return ErrorResponse(415, "unsupported_media_type", "documents must be application/json");
  }
  absl::StatusOr<std::optional<uint64_t>> expected =
      ExpectedVersion(request.Header("if-match"), request.Header("if-none-match"));
  if (!expected.ok()) return Error(expected.status(), collection);
  absl::StatusOr<Document> stored =
      collections->Put(collection, params.Get("id"), request.body, DocumentWriteOptions{*expected});
  if (!stored.ok()) return Error(stored.status(), collection);
  return DocumentResponse(stored->version == 1 ? 201 : 200, *stored);
}

HttpResponse Api::DeleteDocument(const HttpRequest& request, const RouteParams& params) {
  Collections* collections = bus_.collections();
  if (collections == nullptr) return NoCollectionsResponse();
  const absl::string_view collection = params.Get("stream");
  absl::StatusOr<std::optional<uint64_t>> expected =
      ExpectedVersion(request.Header("if-match"), request.Header("if-none-match"));
  if (!expected.ok()) return Error(expected.status(), collection);
  absl::StatusOr<Document> deleted =
      collections->Delete(collection, params.Get("id"), DocumentWriteOptions{*expected});
  if (!deleted.ok()) return Error(deleted.status(), collection);
  return DocumentResponse(200, *deleted);
}

HttpResponse Api::GetDocument(const HttpRequest& request, const RouteParams& params) {
  Collections* collections = bus_.collections();
  if (collections == nullptr) return NoCollectionsResponse();
  const absl::string_view collection = params.Get("stream");
  const absl::string_view id = params.Get("id");
  absl::StatusOr<Document> document;
  if (!request.HasQuery("at")) {
    document = collections->Get(collection, id);
  } else if (absl::StatusOr<Cursor> cursor = Cursor::Decode(request.Query("at")); cursor.ok()) {
    document = collections->GetAt(collection, id, *cursor);
  } else {
    absl::StatusOr<absl::Time> time = ParseRfc3339(request.Query("at"), "at");
    if (!time.ok()) {
      return Error(InvalidArgument("at must be a cursor or an RFC 3339 time"), collection);
    }
    document = collections->GetAtTime(collection, id, *time);
  }
  if (!document.ok()) return Error(document.status(), collection);
  return DocumentResponse(200, *document);
}

HttpResponse Api::DocumentHistory(const HttpRequest&, const RouteParams& params) {
  Collections* collections = bus_.collections();
  if (collections == nullptr) return NoCollectionsResponse();
  const absl::string_view collection = params.Get("stream");
  const absl::string_view id = params.Get("id");
  absl::StatusOr<std::vector<Document>> versions = collections->History(collection, id);
  if (!versions.ok()) return Error(versions.status(), collection);
  return JsonResponse(200, HistoryJson(collection, id, *versions));
}

}  // namespace keel::server
