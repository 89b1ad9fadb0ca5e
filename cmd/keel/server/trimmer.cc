#include "keel/cmd/keel/server/trimmer.h"

#include <chrono>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "absl/strings/str_cat.h"

namespace keel::server {
namespace {

namespace net = boost::asio;

class Trimmer : public std::enable_shared_from_this<Trimmer> {
 public:
  Trimmer(net::io_context& ioc, std::shared_ptr<ServerState> state)
      : state_(std::move(state)), timer_(net::make_strand(ioc)) {}

  void DoWait(absl::Duration delay) {
    if (state_->draining.load()) return;
    timer_.expires_after(absl::ToChronoNanoseconds(delay));
    timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec) self->OnTick();
    });
  }

 private:
  void OnTick() {
    if (state_->draining.load()) return;
    if (!state_->api.bus().NeedsTrim()) return DoWait(state_->options.trim_interval);
    net::post(state_->blocking, [self = shared_from_this()] { self->DoTrim(); });
  }

  // On the blocking pool: store reads and a commit.
  void DoTrim() {
    absl::StatusOr<TrimReport> report = state_->api.bus().Trim(state_->options.trim_budget);
    if (!report.ok()) {
      if (!state_->draining.load()) {
        state_->logger->Warn(absl::StrCat("keel daemon: retention trim failed: ",
                                          report.status().ToString()));
      }
      return DoWait(state_->options.trim_interval);
    }
    state_->api.metrics().CountTrim(report->events, report->bytes, report->dedupe_keys);
    DoWait(report->more ? absl::ZeroDuration() : state_->options.trim_interval);
  }

  const std::shared_ptr<ServerState> state_;
  net::steady_timer timer_;
};

}  // namespace

void StartTrimmer(net::io_context& ioc, std::shared_ptr<ServerState> state) {
  std::make_shared<Trimmer>(ioc, std::move(state))->DoWait(absl::ZeroDuration());
}

}  // namespace keel::server
