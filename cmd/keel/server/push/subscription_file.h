// Push subscriptions declared in a file the daemon reads at start
// (`keel daemon --subscriptions FILE`): JSON, one declaration or an array of
// them, each as POST /v1/subscriptions takes it (rfcs/0010). A file keeps
// the signing secrets out of the process list and the shell history.
//
// Declaring at start follows the HTTP rules, with the file as the source of
// truth for secrets: a new name is created, one stored with the same fields
// is kept (its secrets replaced by the file's when they differ, which is
// how a file rotates them), and one stored with other fields is
// kResourceDrift naming them — the daemon does not start. Subscriptions the
// file does not name (declared over HTTP) are left alone.
//
// Thread safety: free functions; PushService is thread-safe.
#ifndef KEEL_CMD_KEEL_SERVER_PUSH_SUBSCRIPTION_FILE_H_
#define KEEL_CMD_KEEL_SERVER_PUSH_SUBSCRIPTION_FILE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "keel/cmd/keel/server/push/push_service.h"
#include "keel/cmd/keel/server/push/push_subscription.h"

namespace keel::push {

// Reads and validates the declarations of `path`; kInvalidArgument naming
// the file and the declaration for a bad one, or two of the same name.
absl::StatusOr<std::vector<PushSubscription>> ReadSubscriptionFile(const std::string& path);

// Declares each of `subscriptions` on `push`, as above.
absl::Status DeclareSubscriptions(PushService& push,
                                  const std::vector<PushSubscription>& subscriptions);

}  // namespace keel::push

#endif  // KEEL_CMD_KEEL_SERVER_PUSH_SUBSCRIPTION_FILE_H_
