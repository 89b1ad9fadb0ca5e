// Internal: entry points of the two session kinds (http_session.cc,
// sse_session.cc). An HTTP session reads requests on its I/O thread; an SSE
// request turns the connection into an SSE session.
#ifndef KEEL_CMD_KEEL_SERVER_SESSIONS_H_
#define KEEL_CMD_KEEL_SERVER_SESSIONS_H_

#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "keel/cmd/keel/server/connection_slots.h"
#include "keel/cmd/keel/server/publish_coalescer.h"
#include "keel/cmd/keel/server/server_state.h"
#include "keel/core/subscription.h"

namespace keel::server {

// A connection of the request/response threads, bound to its thread's
// context: a concrete executor, where the default socket type copies a
// type-erased one in and out of every operation.
using HttpSocket =
    boost::asio::basic_stream_socket<boost::asio::ip::tcp, boost::asio::io_context::executor_type>;

// `publishes` joins the publishes of the I/O thread that runs the session.
// `client` is the peer as the rate limit counts it (RateLimitKey); empty
// takes the socket's peer address.
void StartHttpSession(HttpSocket socket, std::shared_ptr<ServerState> state,
                      PublishCoalescer& publishes, std::string client = {});

// Takes over the connection of `socket` (leaving it empty), moves it to
// one of the SSE threads (ServerState::sse) and streams `subscription`,
// made with `options`, as text/event-stream. A filtered subscription (tenant or type) also gets
// id-only watermark frames (rfcs/0004-http-api.md). The session holds
// `slot` (null when no limit counts streams) until it ends.
void StartSseSession(HttpSocket& socket, std::unique_ptr<Subscription> subscription,
                     SubscribeOptions options, std::shared_ptr<ServerState> state,
                     std::shared_ptr<ConnectionSlot> slot);

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_SESSIONS_H_
