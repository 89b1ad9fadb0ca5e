// Internal: shared writes for all the live SSE sessions of a stream on one
// SSE thread.
//
// With thousands of connections on one stream, giving each its own
// Subscription meant the fan-out pushed every event into thousands of
// queues and woke each session, and each session copied the same frames
// into a buffer of its own. A session that has caught up instead joins its
// stream's SseBroadcast: the broadcast holds the one Subscription and a
// window of the latest events, and serves its members in rounds. A round
// visits every member once, in chunks (so that new events are taken in
// between, and members visited later in a round already get them), and
// writes to each the frames after its position; the frames after one
// position are built once and the same buffer goes to every member there
// (in the steady state: all of them). Rounds start at most once per
// `sse_flush` interval, so that events arriving meanwhile leave together.
//
// A member whose position falls behind the window (a slow client whose
// write stays in flight while the window moves on), or every member when
// the broadcast's subscription skips a sequence or reports a notice, is
// detached: it subscribes again on its own from its position, which
// catches up from the stream's tail or the store and loses nothing. When
// the bus closes, each member still in the broadcast gets the events up to
// the last one and then the final status (one detached then finds the bus
// closed, as any session catching up on its own does). Filtered sessions (tenant, type) never join:
// their frames differ.
//
// Thread safety: everything runs on the SSE thread that owns the broadcast,
// except the subscription's wakeup, which only posts there.
#ifndef KEEL_CMD_KEEL_SERVER_SSE_BROADCAST_H_
#define KEEL_CMD_KEEL_SERVER_SSE_BROADCAST_H_

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "keel/cmd/keel/server/metrics.h"
#include "keel/cmd/keel/server/server_state.h"
#include "keel/core/subscription.h"

namespace keel::server {

// One Poll of an SSE subscription (a session's or a broadcast's), with the
// store pages it read counted in `metrics`.
struct SsePoll {
  absl::StatusOr<std::vector<EventPtr>> events;
  bool read_store = false;  // It read a page from the store: poll on the pool next.
};
SsePoll PollCountingReads(Subscription& subscription, size_t max, Metrics& metrics);

// Warns that the SSE subscription of `stream` ended with `status`, unless
// the bus closed (a clean end).
void LogSseFailure(Logger& logger, absl::string_view stream, const absl::Status& status);

// What a broadcast needs of a session.
class SseMember {
 public:
  virtual ~SseMember() = default;
  // The last sequence handed to the socket (written or being written).
  virtual uint64_t position() const = 0;
  virtual bool writing() const = 0;
  // Writes `frames` (shared with other members): the events after
  // position() up to `last`, `events` of them.
  virtual void WriteShared(std::shared_ptr<const std::string> frames, uint64_t last,
                           size_t events) = 0;
  // The broadcast can no longer serve this member; it goes on alone from
  // position().
  virtual void Detach() = 0;
  // Every event up to position() was handed over and the stream ended.
  virtual void End(const absl::Status& status) = 0;
};

class SseBroadcasts;

class SseBroadcast : public std::enable_shared_from_this<SseBroadcast> {
 public:
  // Members written to before a round lets other handlers (taking new
  // events, completed writes, new sessions) run.
  static constexpr size_t kChunkMembers = 128;

  // Serves the events after `after` from `subscription` (live, unfiltered).
  SseBroadcast(std::string stream, std::unique_ptr<Subscription> subscription, uint64_t after,
               boost::asio::io_context& context, std::shared_ptr<ServerState> state,
               SseBroadcasts& owner);

  void Start();

  // Adds `member`, whose next event is position() + 1; false (and nothing
  // changes) when the window no longer holds that event or the stream ended.
  bool Join(const std::shared_ptr<SseMember>& member);
  void Leave(SseMember* member);
  // A member's write completed.
  void Written(SseMember* member);

 private:
  using Clock = std::chrono::steady_clock;

  void OnWakeup();  // Any thread.
  void Pull();
  void Take(SsePoll polled);
  // Asks for a round (or, during one, for another after it).
  void ScheduleFlush();
  void Flush();  // Runs one chunk of the current round.
  void Visit(const std::shared_ptr<SseMember>& member, std::vector<SseMember*>& behind,
             std::vector<SseMember*>& done);
  void Serve(SseMember& member);
  std::shared_ptr<const std::string> Frames(uint64_t after, uint64_t last);
  void Trim();
  void DetachAll();
  void Retire();  // Leaves the registry and drops the subscription.
  void DropMember(SseMember* member);

  uint64_t base() const { return head_ - window_.size(); }  // Last sequence before the window.

  const std::string stream_;
  std::unique_ptr<Subscription> subscription_;
  boost::asio::io_context& context_;
  const std::shared_ptr<ServerState> state_;
  const uint64_t epoch_;
  SseBroadcasts& owner_;
  std::vector<std::shared_ptr<SseMember>> members_;
  absl::flat_hash_map<SseMember*, size_t> slots_;  // Index in members_.
  size_t cursor_ = 0;   // Next member of the current round; 0: none running.
  bool again_ = false;  // Something became due during the round.
  // Frames after a position up to built_head_, shared by a round's members.
  absl::flat_hash_map<uint64_t, std::shared_ptr<const std::string>> built_;
  uint64_t built_head_ = 0;
  std::deque<EventPtr> window_;  // Consecutive events ending at head_.
  uint64_t head_;                // Newest sequence received.
  boost::asio::steady_timer flush_timer_;
  Clock::time_point next_flush_;  // Earliest next flush.
  bool flush_scheduled_ = false;
  std::atomic<bool> wake_pending_{false};
  bool pulling_ = false;      // A poll runs on the blocking pool.
  bool catching_up_ = false;  // The last poll read the store: poll on the pool.
  bool retired_ = false;
  std::optional<absl::Status> ended_;  // The subscription's final status.
};

// The broadcasts of one SSE thread, by stream. Used on that thread only.
class SseBroadcasts {
 public:
  std::shared_ptr<SseBroadcast> Find(const std::string& stream) const;
  void Add(const std::string& stream, std::shared_ptr<SseBroadcast> broadcast);
  // Removes `broadcast` if it is still the one registered for `stream`.
  void Remove(const std::string& stream, const SseBroadcast* broadcast);

 private:
  absl::flat_hash_map<std::string, std::shared_ptr<SseBroadcast>> by_stream_;
};

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_SSE_BROADCAST_H_
