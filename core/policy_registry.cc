#include "keel/core/policy_registry.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "keel/core/errors.h"
#include "keel/core/publish_validation.h"
#include "keel/core/status_macros.h"

namespace keel {
namespace {

constexpr absl::string_view kPrefix = "policy/";
constexpr absl::string_view kDeadLetterSuffix = ".dlq";

absl::StatusOr<StreamPolicy> ParseRecord(absl::string_view key, absl::string_view value) {
  absl::StatusOr<StreamPolicy> policy = StreamPolicy::Parse(value);
  if (!policy.ok()) {
    return absl::DataLossError(
        absl::StrCat("declaration record '", key, "' does not parse: ", policy.status().message()));
  }
  return policy;
}

}  // namespace

std::string DeadLetterStream(absl::string_view stream) {
  return absl::StrCat(stream, kDeadLetterSuffix);
}

absl::StatusOr<std::unique_ptr<PolicyRegistry>> PolicyRegistry::Open(MetadataStore& store,
                                                                     StreamPolicy defaults) {
  std::unique_ptr<PolicyRegistry> registry(new PolicyRegistry(store, std::move(defaults)));
  KEEL_ASSIGN_OR_RETURN(std::vector<MetadataStore::Record> records, store.List(kPrefix));
  MutexLock lock(&registry->mu_);
  for (const auto& [key, value] : records) {
    KEEL_ASSIGN_OR_RETURN(StreamPolicy policy, ParseRecord(key, value));
    registry->declared_.emplace(key.substr(kPrefix.size()), std::move(policy));
  }
  return registry;
}

absl::Status PolicyRegistry::Declare(absl::string_view stream, const StreamPolicy& policy) {
  KEEL_RETURN_IF_ERROR(ValidateStreamName(stream));
  // Declarations run one at a time, so the check below still holds when the
  // record is written; mu_ is not held across the (synced) write, so
  // PolicyOf, which every publish calls, never waits for the disk.
  MutexLock declaring(&declare_mu_);
  KEEL_RETURN_IF_ERROR(RefreshLocked(stream));
  {
    ReaderMutexLock lock(&mu_);
    if (const StreamPolicy* declared = DeclaredLocked(stream)) {
      if (*declared == policy) return absl::OkStatus();
      return ResourceDrift(absl::StrCat("stream '", stream,
                                        "' is declared with different settings: ",
                                        absl::StrJoin(DifferingFields(*declared, policy), ", "),
                                        " (declared: ", declared->ToString(), ")"));
    }
  }
  KEEL_RETURN_IF_ERROR(store_.Put(absl::StrCat(kPrefix, stream), policy.ToString()));
  MutexLock lock(&mu_);
  declared_.emplace(std::string(stream), policy);
  return absl::OkStatus();
}

absl::Status PolicyRegistry::Forget(absl::string_view stream) {
  MutexLock declaring(&declare_mu_);
  KEEL_RETURN_IF_ERROR(store_.Delete(absl::StrCat(kPrefix, stream)));
  MutexLock lock(&mu_);
  declared_.erase(std::string(stream));
  return absl::OkStatus();
}

bool PolicyRegistry::Declared(absl::string_view stream) const {
  ReaderMutexLock lock(&mu_);
  return declared_.find(stream) != declared_.end();
}

absl::Status PolicyRegistry::Refresh(absl::string_view stream) {
  KEEL_RETURN_IF_ERROR(ValidateStreamName(stream));
  MutexLock declaring(&declare_mu_);
  return RefreshLocked(stream);
}

absl::Status PolicyRegistry::RefreshAll() {
  MutexLock declaring(&declare_mu_);
  KEEL_ASSIGN_OR_RETURN(std::vector<MetadataStore::Record> records, store_.List(kPrefix));
  for (const auto& [key, value] : records) {
    KEEL_ASSIGN_OR_RETURN(StreamPolicy policy, ParseRecord(key, value));
    MutexLock lock(&mu_);
    declared_.try_emplace(key.substr(kPrefix.size()), std::move(policy));
  }
  return absl::OkStatus();
}

absl::Status PolicyRegistry::RefreshLocked(absl::string_view stream) {
  {
    ReaderMutexLock lock(&mu_);
    if (DeclaredLocked(stream) != nullptr) return absl::OkStatus();
  }
  const std::string key = absl::StrCat(kPrefix, stream);
  KEEL_ASSIGN_OR_RETURN(std::optional<std::string> value, store_.Get(key));
  if (!value) return absl::OkStatus();
  KEEL_ASSIGN_OR_RETURN(StreamPolicy policy, ParseRecord(key, *value));
  MutexLock lock(&mu_);
  declared_.emplace(std::string(stream), std::move(policy));
  return absl::OkStatus();
}

const StreamPolicy* PolicyRegistry::DeclaredLocked(absl::string_view stream) const {
  auto it = declared_.find(stream);
  return it == declared_.end() ? nullptr : &it->second;
}

StreamPolicy PolicyRegistry::PolicyOf(absl::string_view stream) const {
  ReaderMutexLock lock(&mu_);
  return PolicyOfLocked(stream);
}

StreamPolicy PolicyRegistry::PolicyOfLocked(absl::string_view stream) const {
  if (const StreamPolicy* own = DeclaredLocked(stream)) return *own;
  const size_t colon = stream.rfind(':');
  uint32_t partition = 0;
  if (colon != absl::string_view::npos && absl::SimpleAtoi(stream.substr(colon + 1), &partition)) {
    const StreamPolicy* topic = DeclaredLocked(stream.substr(0, colon));
    if (topic != nullptr && partition < topic->partitions) {
      StreamPolicy policy = *topic;
      policy.partitions = 0;
      return policy;
    }
  }
  if (absl::EndsWith(stream, kDeadLetterSuffix)) {
    absl::string_view source = stream.substr(0, stream.size() - kDeadLetterSuffix.size());
    StreamPolicy policy = PolicyOfLocked(source);
    policy.retention = policy.dead_letter_retention;
    policy.partitions = 0;
    return policy;
  }
  return defaults_;
}

std::vector<StreamDeclaration> PolicyRegistry::Declarations() const {
  ReaderMutexLock lock(&mu_);
  std::vector<StreamDeclaration> out;
  for (const auto& [stream, policy] : declared_) out.push_back({stream, policy});
  return out;
}

}  // namespace keel
