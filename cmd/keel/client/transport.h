// Internal to keel_client: the Beast transport steps HttpClient and SseReader
// share — resolving and connecting with a deadline, and turning a transport
// failure into a status a caller can branch on (kDeadlineExceeded for a
// timeout, kUnavailable otherwise), naming the server.
//
// Both clients run a private io_context to completion for each step, so a
// dead server never hangs the caller: the tcp_stream's timer bounds it.
//
// Thread safety: none beyond the io_context's; one caller per stream.
#ifndef KEEL_CMD_KEEL_CLIENT_TRANSPORT_H_
#define KEEL_CMD_KEEL_CLIENT_TRANSPORT_H_

#include <chrono>
#include <cstdint>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace keel::client {

// A non-negative chrono duration for Beast's timers.
std::chrono::nanoseconds ToChrono(absl::Duration d);

bool IsTimeout(const boost::beast::error_code& ec);

// "<what> <host>:<port>: <reason>" as kDeadlineExceeded or kUnavailable.
absl::Status TransportError(absl::string_view what, absl::string_view host, uint16_t port,
                            const boost::beast::error_code& ec);

// Resolves host:port and connects `stream`, both within `timeout` (a name
// the system's resolver does not answer for in time is kDeadlineExceeded),
// running `ioc` until the connect completes. On failure the socket is
// closed.
absl::Status ConnectStream(boost::asio::io_context& ioc, boost::beast::tcp_stream& stream,
                           absl::string_view host, uint16_t port, absl::Duration timeout);

// Sets `Authorization: Bearer <token>` on `request` when `token` is not
// empty (a daemon with --auth-tokens).
template <typename Request>
void SetToken(Request& request, absl::string_view token) {
  if (!token.empty()) request.set("Authorization", absl::StrCat("Bearer ", token));
}

}  // namespace keel::client

#endif  // KEEL_CMD_KEEL_CLIENT_TRANSPORT_H_
