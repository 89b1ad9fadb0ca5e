#include "keel/drivers/durable/tail_verifier.h"

#include "absl/strings/str_cat.h"
#include "keel/core/status_macros.h"
#include "keel/drivers/durable/recovery.h"

namespace keel::durable {

TailVerifier::TailVerifier(StateStore& store, StoreFormat format, Logger& logger,
                           const absl::flat_hash_map<std::string, Head>& heads, InstallFn install)
    : store_(store), format_(format), logger_(logger), install_(std::move(install)) {
  MutexLock lock(&mu_);
  pending_.insert(heads.begin(), heads.end());
  UpdateFastPathLocked();
}

absl::Status TailVerifier::Ensure(absl::string_view stream) {
  if (all_verified_.load(std::memory_order_acquire)) return absl::OkStatus();
  const std::string name(stream);
  MutexLock lock(&mu_);
  while (in_progress_.contains(name)) verified_.Wait(&mu_);
  if (auto failed = failed_.find(name); failed != failed_.end()) return failed->second;
  return pending_.contains(name) ? VerifyLocked(name) : absl::OkStatus();
}

absl::Status TailVerifier::VerifyLocked(const std::string& stream) {
  const Head head = pending_.at(stream);
  in_progress_.insert(stream);
  mu_.Unlock();
  absl::Status status = Check(stream, head);
  mu_.Lock();
  in_progress_.erase(stream);
  verified_.SignalAll();
  if (status.ok() || status.code() == absl::StatusCode::kDataLoss) {
    pending_.erase(stream);
    if (!status.ok()) failed_.emplace(stream, status);
    UpdateFastPathLocked();
  }
  return status;
}

absl::Status TailVerifier::Check(const std::string& stream, Head head) {
  const uint64_t recorded_next = head.next;
  absl::StatusOr<TailRepair> repair = VerifyTail(store_, format_, stream, head);
  if (!repair.ok()) {
    if (repair.status().code() == absl::StatusCode::kDataLoss) {
      logger_.Error(absl::StrCat("durable: stream '", stream,
                                 "' is unreadable; every operation on it will fail: ",
                                 repair.status().message()));
    }
    return repair.status();
  }
  if (!repair->changed()) return absl::OkStatus();
  KEEL_RETURN_IF_ERROR(WriteRepair(store_, stream, *repair, head));
  // Not a warning: heads are written at checkpoints (head_checkpoints.h), so
  // after a crash or kill most streams' heads lag their last events.
  if (repair->caught_up) {
    logger_.Info(absl::StrCat("durable: caught up the head of stream '", stream,
                              "' from its entries: next sequence ", recorded_next, " -> ",
                              head.next));
  }
  LogDropped(logger_, stream, *repair, head);
  install_(stream, head);
  return absl::OkStatus();
}

void TailVerifier::UpdateFastPathLocked() {
  all_verified_.store(pending_.empty() && failed_.empty(), std::memory_order_release);
}

void TailVerifier::StartSweep() {
  MutexLock lock(&mu_);
  if (pending_.empty() || stopping_ || sweeper_.joinable()) return;
  sweeper_ = std::thread([this] { Sweep(); });
}

void TailVerifier::Sweep() {
  MutexLock lock(&mu_);
  while (!stopping_) {
    auto next = pending_.begin();
    while (next != pending_.end() && in_progress_.contains(next->first)) ++next;
    if (next == pending_.end()) return;  // Done, or the rest is being verified.
    absl::Status status = VerifyLocked(std::string(next->first));
    if (!status.ok() && status.code() != absl::StatusCode::kDataLoss) {
      // A failed read or write is not corruption: leave the rest to Ensure.
      logger_.Warn(absl::StrCat("durable: background tail verification stopped: ",
                                status.ToString()));
      return;
    }
  }
}

void TailVerifier::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (sweeper_.joinable()) sweeper_.join();
}

}  // namespace keel::durable
