// FaultInjectingStore: wraps a StateStore to inject the failures that durable
// code must survive: failed writes, corrupt values and crashes that lose
// unsynced writes. For tests; not registered in StoreRegistry().
//
//   FaultInjectingStore store(std::make_unique<MemoryStore>());
//   store.FailNthWrite(2, absl::UnavailableError("disk full"));
//   store.CorruptReadsOf(head_key);
//   ASSERT_OK(store.SimulateCrash());
//
// Ownership: constructed from a unique_ptr it owns the base store (destroying
// the wrapper destroys it); constructed from a pointer it does not, and the
// base must outlive the wrapper. Every write must go through the wrapper,
// which records what SimulateCrash() has to undo.
//
// Close() closes the wrapper only: later calls fail with kClosed, but the
// base stays open so that SimulateCrash() can still undo unsynced writes and
// Reopen() or SimulateCrash() can make the wrapper usable again.
//
// Corrupt reads: Get() of a key passed to CorruptReadsOf() succeeds but
// returns garbage instead of the stored value, as does value() of an
// iterator positioned on it. The garbage is deterministic, one byte longer
// than the real value (so fixed-width decoders notice) and starts with 0xff
// (an invalid protobuf tag): "\xff\xfecorrupt corrupt ...". An
// iterator uses the corrupt keys set when it was created.
//
// Thread safety: all methods, including the fault controls, are safe to call
// concurrently. Writes are serialized by the wrapper.
#ifndef KEEL_STATESTORE_FAULT_INJECTING_STORE_H_
#define KEEL_STATESTORE_FAULT_INJECTING_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/core/mutex.h"
#include "keel/statestore/state_store.h"

namespace keel {

class FaultInjectingStore final : public StateStore {
 public:
  explicit FaultInjectingStore(std::unique_ptr<StateStore> base);
  explicit FaultInjectingStore(StateStore* base);  // Not owned.

  absl::StatusOr<std::string> Get(absl::string_view key) override;
  absl::Status Write(const WriteBatch& batch, const WriteOptions& options) override;
  std::unique_ptr<StoreIterator> NewIterator(const KeyRange& range) override;
  absl::StatusOr<uint64_t> ApproximateSize(const KeyRange& range) override;
  // Closes the wrapper, not the base (see above).
  absl::Status Close() override;
  // Names the wrapper's simulated machine run: each SimulateCrash() (the
  // machine stops) starts a new one, Close() and Reopen() (a killed
  // process) do not. Empty after SetLifetimeUnknown().
  std::string UnsyncedWritesLifetime() const override;
  // The base's: the faults injected here are one-shot or cleared by hand.
  absl::Status WriteStatus() override { return base_->WriteStatus(); }

  // The n-th Write() call from now (n >= 1; 1 = the next one) returns
  // `status` without applying its batch. One shot.
  void FailNthWrite(int n, absl::Status status);
  // After `n` more successful writes, every Write() returns `status` without
  // applying its batch, until ClearWriteFaults().
  void FailWritesAfter(int n, absl::Status status);
  void ClearWriteFaults();

  // Reads of `key` return garbage (see above) until ClearCorruptReads().
  void CorruptReadsOf(absl::string_view key);
  void ClearCorruptReads();

  // From now on UnsyncedWritesLifetime() is empty, as of a store that
  // cannot tell how long its unsynced writes last.
  void SetLifetimeUnknown();

  // Undoes every write not followed by a synced write (as a power loss
  // drops what was not fsynced), then reopens the wrapper. A write with
  // WriteOptions::sync makes itself and every earlier write durable. Write
  // faults, corrupt keys and counters are kept. Iterators made before the
  // crash keep their old snapshot; discard them. Fails only if the base
  // store fails to apply the undo.
  absl::Status SimulateCrash();
  // Makes a closed wrapper usable again, as after a clean restart: unsynced
  // writes stay in place (and can still be lost by SimulateCrash()).
  void Reopen();

  // Writes applied (and, of those, applied with sync) since construction.
  uint64_t writes() const;
  uint64_t synced_writes() const;

  StateStore& base() const { return *base_; }

 private:
  // A key's value before an unsynced write; nullopt when it was absent.
  struct Prior {
    std::string key;
    std::optional<std::string> value;
  };

  // Returns the prior state of every distinct key `batch` touches.
  absl::StatusOr<std::vector<Prior>> ReadPriors(const WriteBatch& batch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::unique_ptr<StateStore> owned_base_;
  StateStore* const base_;
  const uint64_t instance_;  // Tells wrappers apart in their lifetimes.

  mutable Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t write_calls_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t writes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t synced_writes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t crashes_ ABSL_GUARDED_BY(mu_) = 0;
  bool lifetime_unknown_ ABSL_GUARDED_BY(mu_) = false;

  // FailNthWrite: the value of write_calls_ at which to fail; 0 = none.
  uint64_t fail_call_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status fail_call_status_ ABSL_GUARDED_BY(mu_);
  // FailWritesAfter: successes left before failing; nullopt = off.
  std::optional<uint64_t> successes_left_ ABSL_GUARDED_BY(mu_);
  absl::Status fail_after_status_ ABSL_GUARDED_BY(mu_);

  // Shared with iterators, which keep the set they were created with.
  std::shared_ptr<const std::set<std::string, std::less<>>> corrupt_keys_ ABSL_GUARDED_BY(mu_);

  // One entry per unsynced write, oldest first.
  std::vector<std::vector<Prior>> unsynced_ ABSL_GUARDED_BY(mu_);
};

}  // namespace keel

#endif  // KEEL_STATESTORE_FAULT_INJECTING_STORE_H_
