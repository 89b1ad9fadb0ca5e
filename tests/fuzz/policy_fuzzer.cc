// The policy text form ("max_age=168h partitions=4", a config file's
// `declare = <stream> <policy>`, `keel declare --policy`), and its JSON form
// (PUT /v1/streams/{stream}): parsing answers InvalidArgument or a policy,
// and a parsed policy's text form parses back to the same policy (the form
// declarations are persisted in).
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/string_view.h"
#include "keel/cmd/keel/server/policy_json.h"
#include "keel/core/stream_policy.h"

namespace {

void CheckPolicy(const absl::StatusOr<keel::StreamPolicy>& policy) {
  if (!policy.ok()) {
    if (policy.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
    return;
  }
  absl::StatusOr<keel::StreamPolicy> again = keel::StreamPolicy::Parse(policy->ToString());
  if (!again.ok() || *again != *policy) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  CheckPolicy(keel::StreamPolicy::Parse(text));
  absl::StatusOr<keel::StreamDeclaration> declaration = keel::StreamDeclaration::Parse(text);
  if (declaration.ok()) CheckPolicy(declaration->policy);
  CheckPolicy(keel::server::ParsePolicyJson(text));
  return 0;
}
