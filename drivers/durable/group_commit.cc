#include "drivers/durable/group_commit.h"

namespace keel::durable {

absl::Status GroupCommitter::Submit(PendingAppend& append) {
  MutexLock lock(&mu_);
  queue_.push_back(&append);
  while (!append.done && queue_.front() != &append) append.turn.Wait(&mu_);
  if (append.done) return append.status;

  // Leader: take a prefix of the queue within the byte budget (always >= 1).
  std::vector<PendingAppend*> group;
  size_t bytes = 0;
  for (PendingAppend* member : queue_) {
    if (!group.empty() && bytes + member->bytes > max_group_bytes_) break;
    group.push_back(member);
    bytes += member->bytes;
  }
  mu_.Unlock();
  absl::Status status = commit_(group);
  mu_.Lock();
  for (PendingAppend* member : group) {
    queue_.pop_front();
    member->status = status;
    member->done = true;
    if (member != &append) member->turn.Signal();
  }
  if (!queue_.empty()) queue_.front()->turn.Signal();
  return status;
}

size_t GroupCommitter::queued() const {
  MutexLock lock(&mu_);
  return queue_.size();
}

}  // namespace keel::durable
