// The dead-letter routes of Api (rfcs/0005-consumer-groups.md):
// GET /v1/streams/{s}/dead-letters, GET …/dead-letters/{sequence} and
// POST …/dead-letters/{sequence}:republish.
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/api.h"
#include "keel/cmd/keel/server/api_helpers.h"
#include "keel/cmd/keel/server/group_json.h"
#include "keel/cmd/keel/server/http_errors.h"
#include "keel/cmd/keel/server/json_codec.h"
#include "keel/core/dead_letters.h"
#include "keel/core/errors.h"
#include "keel/core/policy_registry.h"

namespace keel::server {
namespace {

constexpr size_t kDefaultLimit = 100;

// The {sequence} of a dead-letter route: a number from 1.
absl::StatusOr<uint64_t> SequenceOf(const RouteParams& params) {
  const absl::string_view text = params.Get("sequence");
  uint64_t sequence = 0;
  if (!absl::SimpleAtoi(text, &sequence) || sequence == 0) {
    return InvalidArgument(
        absl::StrCat("'", text, "' is not a dead-letter sequence (a number from 1)"));
  }
  return sequence;
}

}  // namespace

HttpResponse Api::ListDeadLetters(const HttpRequest& request, const RouteParams& params) {
  if (bus_.replayer() == nullptr) return NoHistoryResponse();
  const absl::string_view stream = params.Get("stream");
  absl::StatusOr<Position> after =
      Position::Parse(request.HasQuery("after") ? request.Query("after") : "earliest");
  if (!after.ok()) return ErrorResponse(after.status());
  absl::StatusOr<size_t> limit = ParseLimit(request, kDefaultLimit, kMaxReplayLimit);
  if (!limit.ok()) return ErrorResponse(limit.status());
  absl::StatusOr<DeadLetterPage> page = keel::ListDeadLetters(bus_, stream, *after, *limit);
  const uint64_t epoch = EpochOf(bus_);
  if (!page.ok()) return ErrorResponseWithDetails(page.status(), DeadLetterStream(stream), epoch);
  return JsonResponse(200, DeadLetterPageJson(*page, epoch));
}

HttpResponse Api::ShowDeadLetter(const HttpRequest&, const RouteParams& params) {
  if (bus_.replayer() == nullptr) return NoHistoryResponse();
  absl::StatusOr<uint64_t> sequence = SequenceOf(params);
  if (!sequence.ok()) return ErrorResponse(sequence.status());
  absl::StatusOr<DeadLetter> letter = GetDeadLetter(bus_, params.Get("stream"), *sequence);
  if (!letter.ok()) return ErrorResponse(letter.status());
  return JsonResponse(200, DeadLetterJson(*letter, EpochOf(bus_)));
}

HttpResponse Api::RepublishDeadLetter(const HttpRequest&, const RouteParams& params) {
  if (bus_.replayer() == nullptr) return NoHistoryResponse();
  absl::StatusOr<uint64_t> sequence = SequenceOf(params);
  if (!sequence.ok()) return ErrorResponse(sequence.status());
  absl::StatusOr<Receipt> receipt = Republish(bus_, params.Get("stream"), *sequence);
  if (!receipt.ok()) return ErrorResponse(receipt.status());
  return JsonResponse(201, ReceiptJson(*receipt));
}

}  // namespace keel::server
