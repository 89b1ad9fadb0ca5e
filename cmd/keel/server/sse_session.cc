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
#include <algorithm>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>

#include "absl/strings/str_cat.h"
#include "cmd/keel/server/api_helpers.h"
#include "cmd/keel/server/json_codec.h"
#include "cmd/keel/server/sessions.h"
#include "cmd/keel/server/sse_frames.h"
#include "core/errors.h"

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

class SseSession : public std::enable_shared_from_this<SseSession> {
 public:
  SseSession(beast::tcp_stream stream, std::unique_ptr<Subscription> subscription, bool filtered,
             std::shared_ptr<ServerState> state)
      : stream_(std::move(stream)),
        subscription_(std::move(subscription)),
        filtered_(filtered),
        state_(std::move(state)),
        epoch_(EpochOf(state_->api.bus())),
        keepalive_(stream_.get_executor()),
        flush_timer_(stream_.get_executor()) {
    state_->sse_sessions.fetch_add(1);
    state_->api.metrics().SseOpened();
  }

  ~SseSession() {
    state_->api.metrics().SseClosed();
    state_->sse_sessions.fetch_sub(1);
  }

  net::any_io_executor executor() { return stream_.get_executor(); }

  void Start() {
    stream_.expires_never();
    std::weak_ptr<SseSession> weak = weak_from_this();
    wake_pending_.store(true);  // Pump below polls; wakeups until then need no post.
    subscription_->SetWakeup([weak] {
      if (auto self = weak.lock()) self->OnWakeup();
    });
    Write(SsePreamble(state_->options.sse_retry, state_->options.cors_origin));
    WatchForDisconnect();
    ArmKeepalive();
    Pump();
  }

 private:
  // Publishing threads.
  void OnWakeup() {
    if (wake_pending_.exchange(true)) return;
    net::post(stream_.get_executor(), [self = shared_from_this()] { self->Pump(); });
  }

  // Polls unless a poll is in flight or the next batch must wait for the
  // write in flight (only a catch-up page is read ahead, and only one).
  void Pump() {
    if (closed_ || finishing_ || polling_) return;
    if (writing_ && (!catching_up_ || !pending_.empty())) return;
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
      net::post(self->stream_.get_executor(), [self, batch = std::move(batch)]() mutable {
        self->polling_ = false;
        if (self->closed_) return self->subscription_->Cancel();  // Deferred by Close().
        self->Deliver(std::move(batch));
      });
    });
  }

  // The only reader of the subscription at any time (strand or pool).
  Batch PollBatch(bool use_cache) {
    Batch batch;
    const uint64_t reads_before = subscription_->catch_up_reads();
    absl::StatusOr<std::vector<EventPtr>> events = subscription_->Poll(PollSize());
    const uint64_t reads = subscription_->catch_up_reads() - reads_before;
    state_->api.metrics().CountCatchUpReads(reads);
    batch.read_store = reads > 0;
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
    catching_up_ = batch.read_store;
    if (!batch.status.ok()) return Finish(batch.status);
    state_->api.metrics().CountDelivered(batch.events);
    if (pending_.empty()) {
      pending_.swap(batch.frames);
    } else {
      pending_ += batch.frames;
    }
    if (!writing_ && !pending_.empty()) Flush();
    if (catching_up_ || wake_pending_.load()) Pump();
  }

  void Flush() {
    if (!catching_up_) {
      next_flush_ = Clock::now() + absl::ToChronoNanoseconds(state_->options.sse_flush);
    }
    std::string bytes;
    bytes.swap(pending_);
    Write(std::move(bytes));
  }

  void Write(std::string bytes) {
    writing_ = true;
    last_write_ = Clock::now();
    auto buffer = std::make_shared<std::string>(std::move(bytes));
    net::async_write(stream_, net::buffer(*buffer),
                     [self = shared_from_this(), buffer](beast::error_code ec, std::size_t) {
                       self->OnWritten(ec);
                     });
  }

  void OnWritten(beast::error_code ec) {
    writing_ = false;
    if (ec) return Close();
    if (!pending_.empty()) Flush();
    if (finishing_) {
      if (!writing_ && !polling_) Close();
      return;
    }
    Pump();
  }

  // The subscription ended: the bus closed (a clean end) or failed. What is
  // already pending is written first.
  void Finish(const absl::Status& status) {
    finishing_ = true;
    if (GetErrorKind(status) != ErrorKind::kClosed) {
      absl::StrAppend(&pending_, "event: keel.error\ndata: {\"message\":",
                      JsonString(status.message()), "}\n\n");
    }
    if (writing_) return;
    if (pending_.empty()) return Close();
    Flush();
  }

  void WatchForDisconnect() {
    stream_.async_read_some(net::buffer(read_buffer_),
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
    subscription_->SetWakeup(nullptr);
    // One reader at a time: a poll on the pool cancels when it returns.
    if (!polling_) subscription_->Cancel();
    keepalive_.cancel();
    flush_timer_.cancel();
    beast::error_code ignored;
    stream_.socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  std::unique_ptr<Subscription> subscription_;
  const bool filtered_;
  uint64_t last_id_ = 0;  // The newest id written or batched (PollBatch only).
  std::shared_ptr<ServerState> state_;
  const uint64_t epoch_;
  net::steady_timer keepalive_;
  net::steady_timer flush_timer_;
  Clock::time_point next_flush_;  // Earliest next write of live events.
  bool lingering_ = false;        // flush_timer_ is armed.
  std::atomic<bool> wake_pending_{false};
  std::string pending_;  // Frames waiting for the write in flight.
  size_t frame_bytes_hint_ = 256;  // Bytes per frame to reserve (PollBatch only).
  Clock::time_point last_write_;
  bool writing_ = false;
  bool polling_ = false;      // A poll runs on the blocking pool.
  bool catching_up_ = true;   // Every subscription starts with a store read.
  bool finishing_ = false;
  bool closed_ = false;
  char read_buffer_[512];
};

}  // namespace

// Moves the connection from the request/response threads to the SSE
// threads: nothing is pending on it between the request and the response.
void StartSseSession(beast::tcp_stream stream, std::unique_ptr<Subscription> subscription,
                     bool filtered, std::shared_ptr<ServerState> state) {
  beast::error_code ec;
  net::ip::tcp::socket& from = stream.socket();
  const net::ip::tcp protocol = from.local_endpoint(ec).protocol();
  if (ec) return;  // The client already went away.
  net::ip::tcp::socket socket(net::make_strand(*state->sse_io), protocol, from.release(ec));
  if (ec) return;
  auto session = std::make_shared<SseSession>(beast::tcp_stream(std::move(socket)),
                                              std::move(subscription), filtered, std::move(state));
  net::dispatch(session->executor(), [session] { session->Start(); });
}

}  // namespace keel::server
