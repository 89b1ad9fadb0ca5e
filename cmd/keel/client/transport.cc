#include "keel/cmd/keel/client/transport.h"

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <future>
#include <memory>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"

namespace keel::client {
namespace {

namespace beast = boost::beast;
namespace net = boost::asio;
using tcp = net::ip::tcp;

void RunToCompletion(net::io_context& ioc) {
  ioc.restart();
  ioc.run();
}

struct Resolved {
  beast::error_code ec;
  tcp::resolver::results_type endpoints;
};

// getaddrinfo cannot be interrupted, and Asio's resolver completes only
// when it returns, however long the system's resolver retries. So it runs
// on a thread of its own that this call stops waiting for after `timeout`;
// a late answer is dropped with the thread's shared state.
absl::StatusOr<tcp::resolver::results_type> ResolveWithin(absl::string_view host, uint16_t port,
                                                          absl::Duration timeout) {
  beast::error_code not_numeric;
  const net::ip::address address = net::ip::make_address(std::string(host), not_numeric);
  if (!not_numeric) {  // An address: nothing to look up.
    return tcp::resolver::results_type::create(tcp::endpoint(address, port), std::string(host),
                                               std::to_string(port));
  }
  auto promise = std::make_shared<std::promise<Resolved>>();
  std::future<Resolved> answer = promise->get_future();
  std::thread([promise, host = std::string(host), port] {
    net::io_context ioc;
    tcp::resolver resolver(ioc);
    Resolved resolved;
    resolved.endpoints = resolver.resolve(host, std::to_string(port), resolved.ec);
    promise->set_value(std::move(resolved));
  }).detach();
  if (answer.wait_for(ToChrono(timeout)) != std::future_status::ready) {
    return absl::DeadlineExceededError(absl::StrCat(
        "cannot resolve ", host, ":", port, ": no answer within ", absl::FormatDuration(timeout)));
  }
  Resolved resolved = answer.get();
  if (resolved.ec) return TransportError("cannot resolve", host, port, resolved.ec);
  return std::move(resolved.endpoints);
}

}  // namespace

std::chrono::nanoseconds ToChrono(absl::Duration d) {
  return absl::ToChronoNanoseconds(std::max(d, absl::ZeroDuration()));
}

bool IsTimeout(const beast::error_code& ec) {
  return ec == beast::error::timeout || ec == net::error::timed_out;
}

absl::Status TransportError(absl::string_view what, absl::string_view host, uint16_t port,
                            const beast::error_code& ec) {
  const std::string message = absl::StrCat(what, " ", host, ":", port, ": ", ec.message());
  if (IsTimeout(ec)) return absl::DeadlineExceededError(message);
  return Unavailable(message);
}

absl::Status ConnectStream(net::io_context& ioc, beast::tcp_stream& stream, absl::string_view host,
                           uint16_t port, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  absl::StatusOr<tcp::resolver::results_type> endpoints = ResolveWithin(host, port, timeout);
  if (!endpoints.ok()) return endpoints.status();
  beast::error_code ec;
  stream.expires_after(ToChrono(deadline - absl::Now()));
  stream.async_connect(*endpoints, [&](beast::error_code e, const tcp::endpoint&) { ec = e; });
  RunToCompletion(ioc);
  if (ec) {
    beast::error_code ignored;
    stream.socket().close(ignored);
    return TransportError("cannot connect to", host, port, ec);
  }
  return absl::OkStatus();
}

}  // namespace keel::client
