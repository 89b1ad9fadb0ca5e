#include "keel/cmd/keel/server/api_helpers.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/http_errors.h"
#include "keel/core/errors.h"
#include "keel/core/event_bus.h"

namespace keel::server {

HttpResponse JsonResponse(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

HttpResponse MethodNotAllowed(absl::string_view allowed) {
  HttpResponse response =
      ErrorResponse(405, "method_not_allowed", absl::StrCat("allowed methods: ", allowed));
  response.headers.emplace_back("Allow", std::string(allowed));
  return response;
}

HttpResponse NoHistoryResponse() {
  return ErrorResponse(absl::UnimplementedError("this driver keeps no history"));
}

absl::StatusOr<size_t> ParseLimit(const HttpRequest& request, size_t fallback, size_t max) {
  if (!request.HasQuery("limit")) return fallback;
  size_t limit = 0;
  if (!absl::SimpleAtoi(request.Query("limit"), &limit) || limit == 0 || limit > max) {
    return InvalidArgument(absl::StrCat("limit must be an integer from 1 to ", max));
  }
  return limit;
}

uint64_t EpochOf(EventBus& bus) {
  return bus.replayer() != nullptr ? bus.replayer()->epoch() : 0;
}

}  // namespace keel::server
