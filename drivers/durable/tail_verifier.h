// TailVerifier: checks each recovered stream's head against its last entry
// once, after the bus has opened, so that opening reads only the heads.
//
// Open used to check every head (one seek per stream); that is what made
// opening grow with the store's size (rfcs/0003-durable-layout.md,
// "Recovery on open"). Now a stream is verified by whichever comes first:
// the first operation that touches it (Ensure, called by publish, replay,
// bounds, listing and trims before they read the stream's head), or a
// background sweep over every stream not yet verified. The rules are
// VerifyTail's: a lagging head (the usual state after a crash: heads are
// written at checkpoints) is caught up (a synced write, then installed in
// the bus) and logged; a corrupt tail makes the stream fail every later
// operation with the same kDataLoss, naming the key, and is logged as an
// error.
//
// Streams that had no head at open need no verification here; entries a
// crash left without a head are taken in by their stream's first commit
// (DurableBus::AdoptHeadless).
//
// Thread safety: thread-safe. A stream is verified once, without holding
// the verifier's lock during the store reads; an operation on a stream being
// verified waits for it. Once every stream is verified, Ensure is one atomic
// load.
#ifndef KEEL_DRIVERS_DURABLE_TAIL_VERIFIER_H_
#define KEEL_DRIVERS_DURABLE_TAIL_VERIFIER_H_

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "keel/core/logger.h"
#include "keel/core/mutex.h"
#include "keel/drivers/durable/key_layout.h"
#include "keel/statestore/state_store.h"

namespace keel::durable {

class TailVerifier {
 public:
  // Called with a repaired head, after it is written, before any operation
  // on the stream proceeds.
  using InstallFn = std::function<void(absl::string_view stream, const Head& head)>;

  // `heads`: the heads read at open, none verified yet.
  TailVerifier(StateStore& store, StoreFormat format, Logger& logger,
               const absl::flat_hash_map<std::string, Head>& heads, InstallFn install);
  ~TailVerifier() { Stop(); }

  // Verifies `stream` if it has not been; then OK, or the stream's
  // kDataLoss (every time) when its tail is corrupt. Other errors (a failed
  // read or repair write) are returned and the stream stays unverified.
  absl::Status Ensure(absl::string_view stream);

  // Starts verifying every remaining stream in a background thread, in key
  // order. Stop() (or destruction) ends it between two streams.
  void StartSweep();
  void Stop();

 private:
  // Verifies the pending stream `stream`, releasing mu_ meanwhile.
  absl::Status VerifyLocked(const std::string& stream) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The store work: VerifyTail, and the repair of a lagging head.
  absl::Status Check(const std::string& stream, Head head);
  void UpdateFastPathLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Sweep();

  StateStore& store_;
  const StoreFormat format_;
  Logger& logger_;
  const InstallFn install_;
  std::atomic<bool> all_verified_{false};  // pending_ and failed_ both empty.

  mutable Mutex mu_;
  std::map<std::string, Head> pending_ ABSL_GUARDED_BY(mu_);  // Ordered: the sweep's order.
  absl::flat_hash_map<std::string, absl::Status> failed_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> in_progress_ ABSL_GUARDED_BY(mu_);
  CondVar verified_;  // Signalled when a verification ends.
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread sweeper_;
};

}  // namespace keel::durable

#endif  // KEEL_DRIVERS_DURABLE_TAIL_VERIFIER_H_
