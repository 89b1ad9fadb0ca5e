// One SSE connection: drains its Subscription into the socket.
//
// The subscription's wakeup (called on publishing threads) only schedules a
// poll on this connection's strand, at most one pending at a time. The
// session polls a batch, writes it, and polls again when the write
// completes; a slow client therefore holds at most one batch in memory and
// its subscription falls back to catch-up reads. A read on the socket only
// detects that the client went away.
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>

#include "absl/strings/str_cat.h"
#include "cmd/keel/server/json_codec.h"
#include "cmd/keel/server/sessions.h"
#include "cmd/keel/server/sse_frames.h"
#include "core/errors.h"

namespace keel::server {
namespace {

namespace beast = boost::beast;
namespace net = boost::asio;

class SseSession : public std::enable_shared_from_this<SseSession> {
 public:
  SseSession(beast::tcp_stream stream, std::unique_ptr<Subscription> subscription,
             std::shared_ptr<ServerState> state)
      : stream_(std::move(stream)),
        subscription_(std::move(subscription)),
        state_(std::move(state)),
        epoch_(state_->api.bus().replayer() != nullptr ? state_->api.bus().replayer()->epoch()
                                                       : 0),
        keepalive_(stream_.get_executor()) {
    state_->sse_sessions.fetch_add(1);
    state_->api.metrics().SseOpened();
  }

  ~SseSession() {
    state_->api.metrics().SseClosed();
    state_->sse_sessions.fetch_sub(1);
  }

  void Start() {
    stream_.expires_never();
    std::weak_ptr<SseSession> weak = weak_from_this();
    subscription_->SetWakeup([weak] {
      if (auto self = weak.lock()) self->ScheduleWake();
    });
    Write(SsePreamble(state_->options.sse_retry, state_->options.cors_origin));
    WatchForDisconnect();
    ArmKeepalive();
  }

 private:
  void ScheduleWake() {
    if (wake_scheduled_.exchange(true)) return;
    net::post(stream_.get_executor(), [self = shared_from_this()] {
      self->wake_scheduled_.store(false);
      self->Pump();
    });
  }

  // Polls and writes the next batch unless a write is in flight.
  void Pump() {
    if (writing_ || closed_) return;
    const uint64_t reads_before = subscription_->catch_up_reads();
    absl::StatusOr<std::vector<EventPtr>> events = subscription_->Poll(state_->options.sse_batch);
    state_->api.metrics().CountCatchUpReads(subscription_->catch_up_reads() - reads_before);
    if (!events.ok()) return Finish(events.status());
    if (events->empty()) return;
    std::string frames;
    for (const EventPtr& event : *events) {
      AppendSseFrame(*event, epoch_, frames);
      if (event->sequence == 0 && event->type == kGapNoticeType) state_->api.metrics().CountGap();
    }
    state_->api.metrics().CountDelivered(events->size());
    Write(std::move(frames));
  }

  void Write(std::string bytes) {
    writing_ = true;
    auto buffer = std::make_shared<std::string>(std::move(bytes));
    net::async_write(stream_, net::buffer(*buffer),
                     [self = shared_from_this(), buffer](beast::error_code ec, std::size_t) {
                       self->writing_ = false;
                       if (ec) return self->Close();
                       if (self->finishing_) return self->Close();
                       self->Pump();
                     });
  }

  // The subscription ended: the bus closed (a clean end) or failed.
  void Finish(const absl::Status& status) {
    finishing_ = true;
    if (GetErrorKind(status) == ErrorKind::kClosed) return Close();
    std::string frame = "event: keel.error\n";
    absl::StrAppend(&frame, "data: {\"message\":", JsonString(status.message()), "}\n\n");
    Write(std::move(frame));
  }

  void WatchForDisconnect() {
    stream_.async_read_some(net::buffer(read_buffer_),
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              if (ec) return self->Close();
                              self->WatchForDisconnect();  // Ignore stray client bytes.
                            });
  }

  void ArmKeepalive() {
    keepalive_.expires_after(absl::ToChronoNanoseconds(state_->options.sse_keepalive));
    keepalive_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || self->closed_) return;
      if (!self->writing_) self->Write(kSseKeepalive);
      self->ArmKeepalive();
    });
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    subscription_->SetWakeup(nullptr);
    subscription_->Cancel();
    keepalive_.cancel();
    beast::error_code ignored;
    stream_.socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  std::unique_ptr<Subscription> subscription_;
  std::shared_ptr<ServerState> state_;
  const uint64_t epoch_;
  net::steady_timer keepalive_;
  std::atomic<bool> wake_scheduled_{false};
  bool writing_ = false;
  bool finishing_ = false;
  bool closed_ = false;
  char read_buffer_[512];
};

}  // namespace

void StartSseSession(beast::tcp_stream stream, std::unique_ptr<Subscription> subscription,
                     std::shared_ptr<ServerState> state) {
  auto session = std::make_shared<SseSession>(std::move(stream), std::move(subscription),
                                              std::move(state));
  session->Start();
}

}  // namespace keel::server
