// PolicyRegistry: a bus's stream declarations, kept in its MetadataStore.
//
// Declare records a stream's (or topic's) policy once; declaring the same
// policy again is a no-op and a different one is kResourceDrift naming the
// differing keys — a declaration is never silently updated. PolicyOf answers
// in this order: the stream's own declaration; for "topic:N", the policy of
// a topic "topic" declared with more than N partitions (without its
// partition count); for "<s>.dlq", the dead-letter retention of <s>'s
// policy; else the bus default.
//
// Other processes may declare streams in the same MetadataStore (a bus that
// several daemons serve): Declare reads a stream's record from the store
// before it writes one, so a declaration another process stored is found
// there (the same policy a no-op, a different one kResourceDrift) and the
// store's conditional write settles a race. Refresh picks up what another
// process declared without waiting for a Declare here.
//
// Thread safety: all methods are safe to call concurrently. PolicyOf and
// Declarations never wait for a declaration's store write.
#ifndef KEEL_CORE_POLICY_REGISTRY_H_
#define KEEL_CORE_POLICY_REGISTRY_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/core/metadata_store.h"
#include "keel/core/mutex.h"
#include "keel/core/stream_policy.h"

namespace keel {

// The dead-letter stream of `stream`: "<stream>.dlq".
std::string DeadLetterStream(absl::string_view stream);

class PolicyRegistry {
 public:
  // Loads every declaration from `store` (kDataLoss naming the key of one
  // that does not parse).
  static absl::StatusOr<std::unique_ptr<PolicyRegistry>> Open(MetadataStore& store,
                                                              StreamPolicy defaults);

  absl::Status Declare(absl::string_view stream, const StreamPolicy& policy);
  // Reads `stream`'s declaration from the store again and adopts it when
  // this registry had none (a declaration never changes). kDataLoss when
  // the record does not parse.
  absl::Status Refresh(absl::string_view stream);
  // Refresh for every declaration the store holds.
  absl::Status RefreshAll();
  StreamPolicy PolicyOf(absl::string_view stream) const;
  // Whether `stream` itself is declared (not through a topic or a default).
  bool Declared(absl::string_view stream) const;
  // Removes `stream`'s own declaration, if any (a stream being deleted).
  absl::Status Forget(absl::string_view stream);
  std::vector<StreamDeclaration> Declarations() const;
  const StreamPolicy& defaults() const { return defaults_; }

 private:
  PolicyRegistry(MetadataStore& store, StreamPolicy defaults)
      : store_(store), defaults_(std::move(defaults)) {}
  const StreamPolicy* DeclaredLocked(absl::string_view stream) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  StreamPolicy PolicyOfLocked(absl::string_view stream) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Refresh, with declare_mu_ held so that no Declare runs in between.
  absl::Status RefreshLocked(absl::string_view stream) ABSL_EXCLUSIVE_LOCKS_REQUIRED(declare_mu_);

  MetadataStore& store_;
  const StreamPolicy defaults_;
  Mutex declare_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // Held through a whole Declare.
  mutable Mutex mu_;
  std::map<std::string, StreamPolicy, std::less<>> declared_ ABSL_GUARDED_BY(mu_);
};

}  // namespace keel

#endif  // KEEL_CORE_POLICY_REGISTRY_H_
