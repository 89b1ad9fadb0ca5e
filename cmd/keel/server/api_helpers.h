// Small pieces shared by the API's route handlers (api.cc and the handler
// files beside it).
//
// Thread safety: pure functions.
#ifndef KEEL_CMD_KEEL_SERVER_API_HELPERS_H_
#define KEEL_CMD_KEEL_SERVER_API_HELPERS_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/cmd/keel/server/http_types.h"

namespace keel {
class EventBus;
}  // namespace keel

namespace keel::server {

// A JSON response with `status` and `body`.
HttpResponse JsonResponse(int status, std::string body);

// 405 with an Allow header.
HttpResponse MethodNotAllowed(absl::string_view allowed);

// 501 for a route over a driver that keeps no history (no Replayer).
HttpResponse NoHistoryResponse();

// ?limit= as an integer in [1, max]; `fallback` when absent.
absl::StatusOr<size_t> ParseLimit(const HttpRequest& request, size_t fallback, size_t max);

// The store epoch cursors of `bus` carry; 0 for a driver without history.
uint64_t EpochOf(EventBus& bus);

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_API_HELPERS_H_
