// The push-subscription routes of Api (rfcs/0010-push-subscriptions.md,
// "HTTP"), over the daemon's PushService.
#include <boost/json.hpp>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/api.h"
#include "keel/cmd/keel/server/api_helpers.h"
#include "keel/cmd/keel/server/http_errors.h"
#include "keel/cmd/keel/server/push/push_service.h"
#include "keel/cmd/keel/server/push/subscription_json.h"
#include "keel/cmd/keel/server/push/subscription_status_json.h"
#include "keel/core/errors.h"

namespace keel::server {
namespace json = boost::json;
namespace {

HttpResponse NoPushResponse() {
  return ErrorResponse(absl::UnimplementedError("this server runs no push subscriptions"));
}

HttpResponse StatusResponse(int code, const absl::StatusOr<push::SubscriptionStatus>& status) {
  if (!status.ok()) return ErrorResponse(status.status());
  return JsonResponse(code, push::SubscriptionStatusJson(*status));
}

// {"secrets":["new","old"?]}
absl::StatusOr<std::vector<std::string>> ParseSecretsBody(absl::string_view body) {
  boost::system::error_code error;
  json::value value = json::parse(json::string_view(body.data(), body.size()), error);
  const json::value* secrets =
      !error && value.is_object() ? value.get_object().if_contains("secrets") : nullptr;
  if (secrets == nullptr || !secrets->is_array() || value.get_object().size() != 1) {
    return InvalidArgument("the body must be {\"secrets\":[\"<new>\", \"<previous>\"?]}");
  }
  std::vector<std::string> out;
  for (const json::value& secret : secrets->get_array()) {
    if (!secret.is_string()) return InvalidArgument("secrets must be strings");
    out.emplace_back(secret.get_string());
  }
  return out;
}

// "" or {"fromSequence":N?,"toSequence":M?}: sequences of the dead-letter stream.
absl::StatusOr<push::RedriveRange> ParseRedriveBody(absl::string_view body) {
  push::RedriveRange range;
  if (body.empty()) return range;
  const auto bad = [] {
    return InvalidArgument(
        "the body must be empty or {\"fromSequence\":<n>?, \"toSequence\":<n>?} (sequences of "
        "the dead-letter stream, from 1)");
  };
  boost::system::error_code error;
  json::value value = json::parse(json::string_view(body.data(), body.size()), error);
  if (error || !value.is_object()) return bad();
  for (const auto& [key, field] : value.get_object()) {
    uint64_t* target = key == "fromSequence" ? &range.from
                       : key == "toSequence" ? &range.to
                                             : nullptr;
    if (target == nullptr) return bad();
    error.clear();
    *target = field.is_number() ? field.to_number<uint64_t>(error) : 0;
    if (!field.is_number() || error || *target == 0) return bad();
  }
  return range;
}

}  // namespace

HttpResponse Api::CreateSubscription(const HttpRequest& request, const RouteParams&) {
  if (push_ == nullptr) return NoPushResponse();
  absl::StatusOr<push::PushSubscription> subscription = push::ParseSubscriptionJson(request.body);
  if (!subscription.ok()) return ErrorResponse(subscription.status());
  absl::StatusOr<push::PushService::Created> created = push_->Create(*std::move(subscription));
  if (!created.ok()) return ErrorResponse(created.status());
  return StatusResponse(created->created ? 201 : 200, created->status);
}

HttpResponse Api::ListSubscriptions(const HttpRequest&, const RouteParams&) {
  if (push_ == nullptr) return NoPushResponse();
  absl::StatusOr<std::vector<push::SubscriptionStatus>> all = push_->List();
  if (!all.ok()) return ErrorResponse(all.status());
  return JsonResponse(200, push::SubscriptionListJson(*all));
}

HttpResponse Api::DescribeSubscription(const HttpRequest&, const RouteParams& params) {
  if (push_ == nullptr) return NoPushResponse();
  return StatusResponse(200, push_->Describe(std::string(params.Get("name"))));
}

HttpResponse Api::PauseSubscription(const HttpRequest&, const RouteParams& params) {
  if (push_ == nullptr) return NoPushResponse();
  const std::string name(params.Get("name"));
  if (absl::Status paused = push_->SetPaused(name, true); !paused.ok()) {
    return ErrorResponse(paused);
  }
  return StatusResponse(200, push_->Describe(name));
}

HttpResponse Api::ResumeSubscription(const HttpRequest&, const RouteParams& params) {
  if (push_ == nullptr) return NoPushResponse();
  const std::string name(params.Get("name"));
  if (absl::Status resumed = push_->SetPaused(name, false); !resumed.ok()) {
    return ErrorResponse(resumed);
  }
  return StatusResponse(200, push_->Describe(name));
}

HttpResponse Api::RotateSubscriptionSecrets(const HttpRequest& request, const RouteParams& params) {
  if (push_ == nullptr) return NoPushResponse();
  absl::StatusOr<std::vector<std::string>> secrets = ParseSecretsBody(request.body);
  if (!secrets.ok()) return ErrorResponse(secrets.status());
  const std::string name(params.Get("name"));
  if (absl::Status set = push_->SetSecrets(name, *std::move(secrets)); !set.ok()) {
    return ErrorResponse(set);
  }
  return StatusResponse(200, push_->Describe(name));
}

HttpResponse Api::RedriveSubscription(const HttpRequest& request, const RouteParams& params) {
  if (push_ == nullptr) return NoPushResponse();
  absl::StatusOr<push::RedriveRange> range = ParseRedriveBody(request.body);
  if (!range.ok()) return ErrorResponse(range.status());
  const std::string name(params.Get("name"));
  if (absl::Status redriven = push_->Redrive(name, *range); !redriven.ok()) {
    return ErrorResponse(redriven);
  }
  return StatusResponse(200, push_->Describe(name));
}

HttpResponse Api::DeleteSubscription(const HttpRequest&, const RouteParams& params) {
  if (push_ == nullptr) return NoPushResponse();
  if (absl::Status deleted = push_->Delete(std::string(params.Get("name"))); !deleted.ok()) {
    return ErrorResponse(deleted);
  }
  return JsonResponse(200, "{\"deleted\":true}");
}

std::string Api::PushMetrics() { return push_ == nullptr ? "" : push_->MetricsText(); }

}  // namespace keel::server
