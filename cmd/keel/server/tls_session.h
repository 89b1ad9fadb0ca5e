// Internal: serves one TLS connection (`--tls-cert`) through the same
// HTTP and SSE sessions as a plain one.
//
// After the handshake, the connection's decrypted bytes travel over a
// local socket pair to an ordinary HTTP session (sessions.h), which never
// knows TLS is there: the sessions read and write their sockets directly,
// without blocking, in ways a TLS stream cannot follow (an encrypted record
// written in part would lose the rest). The copy costs a local write and
// read per direction; connections and requests behave exactly as over
// plain TCP, SSE included.
//
// When the HTTP session ends its side, the client gets TLS's close_notify
// before the connection closes: an SSE body, delimited by the end of the
// connection, then ends cleanly rather than as a truncated stream. A client
// still sending at that point (a request refused before it was read)
// gets a lingering close, as over plain TCP.
#ifndef KEEL_CMD_KEEL_SERVER_TLS_SESSION_H_
#define KEEL_CMD_KEEL_SERVER_TLS_SESSION_H_

#include <memory>

#include "keel/cmd/keel/server/sessions.h"

namespace boost::asio::ssl {
class context;
}

namespace keel::server {

void StartTlsSession(HttpSocket socket, std::shared_ptr<boost::asio::ssl::context> context,
                     std::shared_ptr<ServerState> state, PublishCoalescer& publishes);

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_TLS_SESSION_H_
