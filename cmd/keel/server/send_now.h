// Internal: SendNow writes what a non-blocking socket takes at once.
//
// Sessions try a write directly before going through Asio: a response or a
// broadcast frame the socket takes whole then needs no asynchronous write,
// completion or handler. A full socket buffer is not an error here; the
// caller writes the rest asynchronously.
//
// Thread safety: as the socket's own operations.
#ifndef KEEL_CMD_KEEL_SERVER_SEND_NOW_H_
#define KEEL_CMD_KEEL_SERVER_SEND_NOW_H_

#include <cstddef>

#include <boost/asio/error.hpp>
#include <boost/system/error_code.hpp>

namespace keel::server {

// The bytes of `buffer` that `socket` (in non-blocking mode) took; `ec` is
// set only for a real error.
template <typename Socket, typename ConstBuffer>
size_t SendNow(Socket& socket, const ConstBuffer& buffer, boost::system::error_code& ec) {
  const size_t sent = socket.write_some(buffer, ec);
  if (ec == boost::asio::error::would_block || ec == boost::asio::error::try_again) ec = {};
  return sent;
}

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_SEND_NOW_H_
