#include "keel/cmd/keel/client/transport.h"

#include <algorithm>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>

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

absl::Status ConnectStream(net::io_context& ioc, beast::tcp_stream& stream,
                           absl::string_view host, uint16_t port, absl::Duration timeout) {
  beast::error_code ec;
  tcp::resolver resolver(ioc);
  tcp::resolver::results_type endpoints;
  resolver.async_resolve(std::string(host), std::to_string(port),
                         [&](beast::error_code e, tcp::resolver::results_type results) {
                           ec = e;
                           endpoints = std::move(results);
                         });
  RunToCompletion(ioc);
  if (ec) return TransportError("cannot resolve", host, port, ec);
  stream.expires_after(ToChrono(timeout));
  stream.async_connect(endpoints, [&](beast::error_code e, const tcp::endpoint&) { ec = e; });
  RunToCompletion(ioc);
  if (ec) {
    beast::error_code ignored;
    stream.socket().close(ignored);
    return TransportError("cannot connect to", host, port, ec);
  }
  return absl::OkStatus();
}

}  // namespace keel::client
