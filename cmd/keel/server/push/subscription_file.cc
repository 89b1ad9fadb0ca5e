#include "keel/cmd/keel/server/push/subscription_file.h"

#include <boost/json.hpp>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/push/subscription_json.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::push {
namespace json = boost::json;

absl::StatusOr<std::vector<PushSubscription>> ReadSubscriptionFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return InvalidArgument(absl::StrCat("cannot read the subscriptions file ", path));
  std::stringstream text;
  text << file.rdbuf();
  boost::system::error_code error;
  json::value value = json::parse(text.str(), error);
  if (error) {
    return InvalidArgument(absl::StrCat(path, " is not JSON: ", error.message()));
  }
  json::array declarations;
  if (value.is_array()) {
    declarations = std::move(value.get_array());
  } else {
    declarations.push_back(std::move(value));
  }
  std::vector<PushSubscription> out;
  std::set<std::string> names;
  for (size_t i = 0; i < declarations.size(); ++i) {
    absl::StatusOr<PushSubscription> parsed =
        ParseSubscriptionJson(json::serialize(declarations[i]));
    if (!parsed.ok()) {
      return InvalidArgument(
          absl::StrCat(path, ", declaration ", i + 1, ": ", parsed.status().message()));
    }
    if (!names.insert(parsed->name).second) {
      return InvalidArgument(absl::StrCat(path, " declares '", parsed->name, "' twice"));
    }
    out.push_back(*std::move(parsed));
  }
  return out;
}

absl::Status DeclareSubscriptions(PushService& push,
                                  const std::vector<PushSubscription>& subscriptions) {
  for (const PushSubscription& subscription : subscriptions) {
    KEEL_ASSIGN_OR_RETURN(PushService::Created created, push.Create(subscription));
    if (!created.created && created.status.subscription.secrets != subscription.secrets) {
      KEEL_RETURN_IF_ERROR(push.SetSecrets(subscription.name, subscription.secrets));
    }
  }
  return absl::OkStatus();
}

}  // namespace keel::push
