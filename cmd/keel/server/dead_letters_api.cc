// GET /v1/streams/{s}/dead-letters, GET …/dead-letters/{sequence} and
// POST …/dead-letters/{sequence}:republish (see groups_api.h).
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "cmd/keel/server/api_helpers.h"
#include "cmd/keel/server/group_json.h"
#include "cmd/keel/server/groups_api.h"
#include "cmd/keel/server/http_errors.h"
#include "cmd/keel/server/json_codec.h"
#include "core/dead_letters.h"
#include "core/errors.h"
#include "core/policy_registry.h"

namespace keel::server {
namespace {

constexpr size_t kDefaultLimit = 100;

HttpResponse List(EventBus& bus, const std::string& stream, const HttpRequest& request) {
  absl::StatusOr<Position> after =
      Position::Parse(request.HasQuery("after") ? request.Query("after") : "earliest");
  if (!after.ok()) return ErrorResponse(after.status());
  absl::StatusOr<size_t> limit = ParseLimit(request, kDefaultLimit, kMaxReplayLimit);
  if (!limit.ok()) return ErrorResponse(limit.status());
  absl::StatusOr<DeadLetterPage> page = ListDeadLetters(bus, stream, *after, *limit);
  const uint64_t epoch = EpochOf(bus);
  if (!page.ok()) return ErrorResponseWithDetails(page.status(), DeadLetterStream(stream), epoch);
  return JsonResponse(200, DeadLetterPageJson(*page, epoch));
}

}  // namespace

HttpResponse RouteDeadLetters(EventBus& bus, const std::string& stream,
                              const HttpRequest& request) {
  if (bus.replayer() == nullptr) {
    return ErrorResponse(absl::UnimplementedError("this driver keeps no history"));
  }
  const auto& s = request.segments;
  if (s.size() == 4) return request.method == "GET" ? List(bus, stream, request)
                                                    : MethodNotAllowed("GET");
  if (s.size() != 5) {
    return ErrorResponse(404, "not_found", absl::StrCat("no route for ", request.path));
  }
  absl::string_view segment = s[4];
  const bool republish = absl::ConsumeSuffix(&segment, ":republish");
  uint64_t sequence = 0;
  if (!absl::SimpleAtoi(segment, &sequence) || sequence == 0) {
    return ErrorResponse(InvalidArgument(
        absl::StrCat("'", segment, "' is not a dead-letter sequence (a number from 1)")));
  }
  if (republish) {
    if (request.method != "POST") return MethodNotAllowed("POST");
    absl::StatusOr<Receipt> receipt = Republish(bus, stream, sequence);
    if (!receipt.ok()) return ErrorResponse(receipt.status());
    return JsonResponse(201, ReceiptJson(*receipt));
  }
  if (request.method != "GET") return MethodNotAllowed("GET");
  absl::StatusOr<DeadLetter> letter = GetDeadLetter(bus, stream, sequence);
  if (!letter.ok()) return ErrorResponse(letter.status());
  return JsonResponse(200, DeadLetterJson(*letter, EpochOf(bus)));
}

}  // namespace keel::server
