// One SSE connection: drains its Subscription into the socket. Runs on the
// server's SSE threads, apart from request/response handling.
//
// One write in flight. Events that arrive while a write is in flight stay in
// the subscription's bounded queue and leave together in the next write, so
// under load a session makes one system call per batch rather than one per
// event. The subscription's wakeup (called on publishing threads) posts at
// most one poll per write cycle: `wake_pending_` stays set while a poll is
// queued or the session is busy (it polls again when it is done), and is
// cleared just before each poll, so an event offered after that posts again
// and one offered before is in the poll.
//
// Writes of live events are at least `sse_flush` apart: with thousands of
// connections, one write per event and connection costs far more CPU (the
// send and the loopback receive path) than the events themselves, so a
// session that just wrote waits out the interval and sends what arrived
// meanwhile in one write. An event that finds the session idle for longer
// leaves at once.
//
// Store reads (the first poll, resuming, a slow client's catch-up) run on the
// blocking pool, never on the I/O thread; while catching up the session reads
// the next page while the previous one is being written. Memory per
// connection stays bounded by the subscription's queue, one batch being
// written and at most one batch read ahead; a slow client's subscription
// catches up from the stream's shared tail of recent events (the same events
// and cached frames as live ones, so that is handled as live here) or, when
// it is further behind, with store reads, so nothing is lost. A read on the socket only
// detects that the client went away.
//
// A session that has caught up and has no filter hands its subscription
// over to its stream's broadcast on this thread (sse_broadcast.h), or
// drops it when the stream already has one, and from then on only writes
// the frames the broadcast shares among its members. Detached (it fell
// behind the broadcast's window), it subscribes again from its position and
// goes on as above until it catches up again.
#include <algorithm>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/server/api_helpers.h"
#include "keel/cmd/keel/server/json_codec.h"
#include "keel/cmd/keel/server/send_now.h"
#include "keel/cmd/keel/server/sessions.h"
#include "keel/cmd/keel/server/sse_broadcast.h"
#include "keel/cmd/keel/server/sse_frames.h"
#include "keel/cmd/keel/server/sse_threads.h"
#include "keel/core/errors.h"

namespace keel::server {
namespace {

namespace beast = boost::beast;
namespace net = boost::asio;

using Clock = std::chrono::steady_clock;

// What one poll produced, as frames ready to write.
struct Batch {
  absl::Status status;
  std::string frames;
  size_t events = 0;
  bool read_store = false;  // The poll read a page from the store.
};

class SseSession : public std::enable_shared_from_this<SseSession>, public SseMember {
 public:
  SseSession(net::ip::tcp::socket socket, std::unique_ptr<Subscription> subscription,
             SubscribeOptions options, SseThreads::Thread& thread,
             std::shared_ptr<ServerState> state, std::shared_ptr<ConnectionSlot> slot)
      : socket_(std::move(socket)),
        subscription_(std::move(subscription)),
        options_(std::move(options)),
        filtered_(!options_.filter.empty()),
        thread_(thread),
        state_(std::move(state)),
        slot_(std::move(slot)),
        epoch_(EpochOf(state_->api.bus())),
        keepalive_(socket_.get_executor()),
        flush_timer_(socket_.get_executor()) {
    state_->sse_sessions.fetch_add(1);
    state_->api.metrics().SseOpened();
  }

  ~SseSession() override {
    state_->api.metrics().SseUnsent(-static_cast<int64_t>(counted_unsent_));
    state_->api.metrics().SseClosed();
    state_->sse_sessions.fetch_sub(1);
  }

  net::any_io_executor executor() { return socket_.get_executor(); }

  void Start() {
    Follow(std::move(subscription_));
    Write(SsePreamble(state_->options.sse_retry, state_->options.cors_origin));
    WatchForDisconnect();
    ArmKeepalive();
    Pump();
  }

  // SseMember.
  uint64_t position() const override { return position_; }
  bool writing() const override { return writing_; }

  // Tries to send everything at once: a broadcast writes to thousands of
  // sessions in a row, and one that the socket takes whole needs no
  // asynchronous write and no completion handler. The rest, if any, is
  // written asynchronously.
  void WriteShared(std::shared_ptr<const std::string> frames, uint64_t last,
                   size_t events) override {
    position_ = last;
    last_write_ = Clock::now();
    beast::error_code ec;
    const size_t sent = SendNow(socket_, net::buffer(*frames), ec);
    if (ec) {
      // Not closed here: the broadcast is iterating over its members.
      net::post(socket_.get_executor(), [self = shared_from_this()] { self->Close(); });
      return;
    }
    state_->api.metrics().CountDelivered(events);
    if (sent == frames->size()) return;
    writing_ = true;
    SetInFlight(frames->size() - sent);
    net::async_write(socket_, net::buffer(*frames) + sent,
                     [self = shared_from_this(), frames](beast::error_code ec, std::size_t) {
                       self->OnWritten(ec);
                     });
  }

  void Detach() override {
    LeftBroadcast();
    if (!closed_) Resubscribe();
  }

  void End(const absl::Status& status) override {
    LeftBroadcast();
    if (!closed_) Finish(status);
  }

 private:
  void Follow(std::unique_ptr<Subscription> subscription) {
    subscription_ = std::move(subscription);
    std::weak_ptr<SseSession> weak = weak_from_this();
    wake_pending_.store(true);  // Pump polls next; wakeups until then need no post.
    subscription_->SetWakeup([weak] {
      if (auto self = weak.lock()) self->OnWakeup();
    });
  }

  // Caught up (and unfiltered): the stream's broadcast serves this session
  // from now on. Its subscription becomes the broadcast's when the stream
  // has none yet, else it is dropped.
  bool TryJoin() {
    if (filtered_ || !pending_.empty()) return false;
    position_ = subscription_->position().sequence;
    std::shared_ptr<SseBroadcast> broadcast = thread_.broadcasts.Find(options_.stream);
    if (broadcast != nullptr) {
      if (!broadcast->Join(shared_from_this())) return false;
      subscription_.reset();  // Cancels it.
      JoinedBroadcast(broadcast);
      return true;
    }
    subscription_->SetWakeup(nullptr);
    broadcast = std::make_shared<SseBroadcast>(options_.stream, std::move(subscription_), position_,
                                               thread_.context, state_, thread_.broadcasts);
    thread_.broadcasts.Add(options_.stream, broadcast);
    broadcast->Join(shared_from_this());
    JoinedBroadcast(broadcast);
    broadcast->Start();  // May detach this session already.
    return true;
  }

  void JoinedBroadcast(const std::shared_ptr<SseBroadcast>& broadcast) {
    broadcast_ = broadcast;
    state_->api.metrics().SseShared(1);
  }

  void LeftBroadcast() {
    if (!broadcast_.expired()) state_->api.metrics().SseShared(-1);
    broadcast_.reset();
  }

  // Subscribes again after position_ (on the blocking pool: subscribing
  // reads the stream's bounds), then catches up as any new session does.
  void Resubscribe() {
    SubscribeOptions options = options_;
    options.after = Position::After(Cursor::For(options_.stream, epoch_, position_));
    catching_up_ = true;
    polling_ = true;
    net::post(state_->blocking, [self = shared_from_this(), options = std::move(options)] {
      absl::StatusOr<std::unique_ptr<Subscription>> subscription =
          self->state_->api.bus().Subscribe(options);
      net::post(self->executor(), [self, subscription = std::move(subscription)]() mutable {
        self->polling_ = false;
        if (self->closed_) return;  // The new subscription is cancelled as it goes.
        if (!subscription.ok()) return self->Fail(subscription.status());
        self->Follow(*std::move(subscription));
        self->Pump();
      });
    });
  }

  // Publishing threads.
  void OnWakeup() {
    if (wake_pending_.exchange(true)) return;
    net::post(socket_.get_executor(), [self = shared_from_this()] { self->Pump(); });
  }

  // Polls unless a poll is in flight or the next batch must wait for the
  // write in flight (only a catch-up page is read ahead, and only one).
  void Pump() {
    if (closed_ || finishing_ || polling_ || subscription_ == nullptr) return;
    if (writing_ && (!catching_up_ || !pending_.empty())) return;
    if (!catching_up_ && !writing_ && TryJoin()) return;
    if (!catching_up_ && Linger()) return;
    wake_pending_.store(false);
    if (catching_up_) return PollOnPool();
    Deliver(PollBatch(/*use_cache=*/true));
  }

  // True while live events must wait for `next_flush_`; the timer pumps then.
  bool Linger() {
    if (lingering_) return true;
    if (Clock::now() >= next_flush_) return false;
    lingering_ = true;
    flush_timer_.expires_at(next_flush_);
    flush_timer_.async_wait([self = shared_from_this()](beast::error_code) {
      self->lingering_ = false;
      self->Pump();
    });
    return true;
  }

  void PollOnPool() {
    polling_ = true;
    net::post(state_->blocking, [self = shared_from_this()] {
      Batch batch = self->PollBatch(/*use_cache=*/false);
      net::post(self->socket_.get_executor(), [self, batch = std::move(batch)]() mutable {
        self->polling_ = false;
        if (self->closed_) return self->subscription_->Cancel();  // Deferred by Close().
        self->Deliver(std::move(batch));
      });
    });
  }

  // The only reader of the subscription at any time (strand or pool).
  Batch PollBatch(bool use_cache) {
    Batch batch;
    SsePoll polled = PollCountingReads(*subscription_, PollSize(), state_->api.metrics());
    absl::StatusOr<std::vector<EventPtr>>& events = polled.events;
    batch.read_store = polled.read_store;
    if (!events.ok()) {
      batch.status = events.status();
      return batch;
    }
    // Frames of a live batch are shared by every session of the stream; a
    // store page is this session's own, so it skips the cache.
    SseFrameCache* cache = use_cache ? &ThreadSseFrameCache() : nullptr;
    // Sized up front from the frames seen so far: growing by doubling copied
    // every byte about twice more and churned the heap of 10,000 sessions.
    batch.frames.reserve(events->size() * frame_bytes_hint_);
    for (const EventPtr& event : *events) {
      if (cache != nullptr) {
        cache->Append(state_->id, *event, epoch_, batch.frames);
      } else {
        AppendSseFrame(*event, epoch_, batch.frames);
      }
      if (event->sequence == 0 && event->type == kGapNoticeType) state_->api.metrics().CountGap();
    }
    batch.events = events->size();
    if (!events->empty()) frame_bytes_hint_ = batch.frames.size() / events->size() + 16;
    if (filtered_) AppendWatermark(*events, batch.frames);
    return batch;
  }

  // A filtered reader's position passes the events its filter skips; an
  // id-only frame (which EventSource takes as its last event ID without
  // dispatching anything) carries that position, so a reader of an idle
  // tenant reconnects from near the head instead of rescanning the stream.
  void AppendWatermark(const std::vector<EventPtr>& events, std::string& frames) {
    for (const EventPtr& event : events) {
      if (event->sequence != 0) last_id_ = std::max(last_id_, event->sequence);
    }
    const Cursor position = subscription_->position();
    if (position.sequence <= last_id_) return;
    last_id_ = position.sequence;
    AppendSseIdFrame(position, frames);
  }

  // The server-wide frame budget shared by the open sessions (two batches
  // each): at least 16 events, at most sse_batch.
  size_t PollSize() const {
    const size_t sessions = std::max(1, state_->sse_sessions.load());
    const size_t share = state_->options.sse_buffer_events / (2 * sessions);
    return std::min(state_->options.sse_batch, std::max<size_t>(share, 16));
  }

  void Deliver(Batch batch) {
    // A page that touched the store says the subscription is catching up;
    // an answer from the live queue says it is live again.
    const bool caught_up = catching_up_ && !batch.read_store;
    catching_up_ = batch.read_store;
    if (!batch.status.ok()) return Fail(batch.status);
    state_->api.metrics().CountDelivered(batch.events);
    if (pending_.empty()) {
      pending_.swap(batch.frames);
    } else {
      pending_ += batch.frames;
    }
    if (!writing_ && !pending_.empty()) Flush();
    CountUnsent();
    // Once caught up, Pump joins the stream's broadcast at once rather than
    // at the next event, when every session of a quiet stream would do so
    // together.
    if (catching_up_ || caught_up || wake_pending_.load()) Pump();
  }

  // Brings keel_sse_unsent_bytes up to date with this session's pending
  // and in-flight bytes: what a slow client makes the daemon hold.
  void CountUnsent() {
    const size_t unsent = pending_.size() + in_flight_;
    state_->api.metrics().SseUnsent(static_cast<int64_t>(unsent) -
                                    static_cast<int64_t>(counted_unsent_));
    counted_unsent_ = unsent;
  }

  void SetInFlight(size_t bytes) {
    in_flight_ = bytes;
    CountUnsent();
  }

  void Flush() {
    if (!catching_up_) {
      next_flush_ = Clock::now() + absl::ToChronoNanoseconds(state_->options.sse_flush);
    }
    std::string bytes;
    bytes.swap(pending_);
    Write(std::move(bytes));
  }

  void Write(std::string text) {
    auto bytes = std::make_shared<const std::string>(std::move(text));
    writing_ = true;
    SetInFlight(bytes->size());
    last_write_ = Clock::now();
    net::async_write(socket_, net::buffer(*bytes),
                     [self = shared_from_this(), bytes](beast::error_code ec, std::size_t) {
                       self->OnWritten(ec);
                     });
  }

  void OnWritten(beast::error_code ec) {
    writing_ = false;
    SetInFlight(0);
    if (ec) return Close();
    if (!pending_.empty()) Flush();
    if (finishing_) {
      if (!writing_ && !polling_) Close();
      return;
    }
    if (std::shared_ptr<SseBroadcast> broadcast = broadcast_.lock()) return broadcast->Written(this);
    Pump();
  }

  // This session's own subscription ended: logged at warn unless the bus
  // closed (a broadcast's end is logged once by the broadcast), then
  // finished.
  void Fail(const absl::Status& status) {
    LogSseFailure(*state_->logger, options_.stream, status);
    Finish(status);
  }

  // The subscription ended: the bus closed (a clean end) or failed. What is
  // already pending is written first.
  void Finish(const absl::Status& status) {
    finishing_ = true;
    if (GetErrorKind(status) != ErrorKind::kClosed) {
      absl::StrAppend(&pending_,
                      "event: keel.error\ndata: {\"message\":", JsonString(status.message()),
                      "}\n\n");
    }
    CountUnsent();
    if (writing_) return;
    if (pending_.empty()) return Close();
    Flush();
  }

  void WatchForDisconnect() {
    socket_.async_read_some(net::buffer(read_buffer_),
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              if (ec) return self->Close();
                              self->WatchForDisconnect();  // Ignore stray client bytes.
                            });
  }

  // Nothing was written for a keepalive interval (a stream with traffic
  // needs no keepalives: with thousands of sessions they would all be due
  // at once, in the middle of the traffic).
  bool Idle() const {
    return !writing_ && !finishing_ &&
           Clock::now() - last_write_ >= absl::ToChronoNanoseconds(state_->options.sse_keepalive);
  }

  // Due one interval after the last write, so a connection is never silent
  // for longer than that.
  void ArmKeepalive() {
    const auto interval = absl::ToChronoNanoseconds(state_->options.sse_keepalive);
    Clock::time_point due = last_write_ + interval;
    if (due <= Clock::now()) due = Clock::now() + interval;  // A write was in flight.
    keepalive_.expires_at(due);
    keepalive_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || self->closed_) return;
      if (self->Idle()) self->Write(kSseKeepalive);
      self->ArmKeepalive();
    });
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    if (std::shared_ptr<SseBroadcast> broadcast = broadcast_.lock()) {
      broadcast->Leave(this);
      LeftBroadcast();
    }
    // One reader at a time: a poll on the pool cancels when it returns.
    if (subscription_ != nullptr) {
      subscription_->SetWakeup(nullptr);
      if (!polling_) subscription_->Cancel();
    }
    keepalive_.cancel();
    flush_timer_.cancel();
    beast::error_code ignored;
    socket_.shutdown(net::ip::tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

  // A plain socket: Beast's tcp_stream wraps each write in a timed
  // operation, and with thousands of sessions that showed in the profile.
  net::ip::tcp::socket socket_;
  std::unique_ptr<Subscription> subscription_;  // Null while a member or resubscribing.
  const SubscribeOptions options_;              // To subscribe again once detached.
  const bool filtered_;
  SseThreads::Thread& thread_;
  // Set while the broadcast serves this session (it holds its members and
  // stays registered while it has any, not the reverse).
  std::weak_ptr<SseBroadcast> broadcast_;
  uint64_t position_ = 0;                  // Last sequence handed to the socket (member).
  uint64_t last_id_ = 0;                   // The newest id written or batched (PollBatch only).
  std::shared_ptr<ServerState> state_;
  const std::shared_ptr<ConnectionSlot> slot_;  // Given back when the stream ends.
  const uint64_t epoch_;
  net::steady_timer keepalive_;
  net::steady_timer flush_timer_;
  Clock::time_point next_flush_;  // Earliest next write of live events.
  bool lingering_ = false;        // flush_timer_ is armed.
  std::atomic<bool> wake_pending_{false};
  std::string pending_;            // Frames waiting for the write in flight.
  size_t in_flight_ = 0;           // Bytes of the write in flight.
  size_t counted_unsent_ = 0;      // This session's share of keel_sse_unsent_bytes.
  size_t frame_bytes_hint_ = 256;  // Bytes per frame to reserve (PollBatch only).
  Clock::time_point last_write_;
  bool writing_ = false;
  bool polling_ = false;     // A poll or a new subscription runs on the blocking pool.
  bool catching_up_ = true;  // Every subscription starts with a store read.
  bool finishing_ = false;
  bool closed_ = false;
  char read_buffer_[512];
};

}  // namespace

// Moves the connection from the request/response threads to the SSE
// threads: nothing is pending on it between the request and the response.
void StartSseSession(HttpSocket& from, std::unique_ptr<Subscription> subscription,
                     SubscribeOptions options, std::shared_ptr<ServerState> state,
                     std::shared_ptr<ConnectionSlot> slot) {
  beast::error_code ec;
  const net::ip::tcp protocol = from.local_endpoint(ec).protocol();
  if (ec) return;  // The client already went away.
  SseThreads::Thread& thread = state->sse->Next();
  net::ip::tcp::socket socket(thread.context, protocol, from.release(ec));
  if (ec) return;
  socket.non_blocking(true, ec);  // For WriteShared's direct send.
  if (ec) return;
  auto session = std::make_shared<SseSession>(std::move(socket), std::move(subscription),
                                              std::move(options), thread, std::move(state),
                                              std::move(slot));
  net::dispatch(session->executor(), [session] { session->Start(); });
}

}  // namespace keel::server
