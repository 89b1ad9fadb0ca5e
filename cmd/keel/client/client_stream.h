// Internal to keel_client: the connection HttpClient and SseReader talk
// over — plain TCP, or TLS over it (ClientTls) — so both run the same Beast
// reads and writes on either (Visit).
//
// Thread safety: none; one caller at a time.
#ifndef KEEL_CMD_KEEL_CLIENT_CLIENT_STREAM_H_
#define KEEL_CMD_KEEL_CLIENT_CLIENT_STREAM_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "keel/cmd/keel/client/http_client.h"

namespace keel::client {

class ClientStream {
 public:
  ClientStream(boost::asio::io_context& ioc, ClientTls tls);

  // Connects (and with TLS, shakes hands, checking the server's
  // certificate) within `timeout`, on a fresh connection. kUnavailable or
  // kDeadlineExceeded as ConnectStream; kInvalidArgument for TLS files
  // that cannot be read.
  absl::Status Connect(const std::string& host, uint16_t port, absl::Duration timeout);

  // The TCP layer, for its timer.
  boost::beast::tcp_stream& tcp();

  // Calls `f` with the stream to read and write: the TLS stream or the TCP one.
  template <typename F>
  decltype(auto) Visit(F&& f) {
    if (tls_stream_) return f(*tls_stream_);
    return f(plain_);
  }

  // Shuts the connection down and closes it.
  void Close();

 private:
  absl::Status MakeContext();

  boost::asio::io_context& ioc_;
  const ClientTls tls_;
  std::unique_ptr<boost::asio::ssl::context> context_;  // Built on the first TLS connect.
  boost::beast::tcp_stream plain_;
  std::optional<boost::beast::ssl_stream<boost::beast::tcp_stream>> tls_stream_;
};

// Whether `ec` is how a connection's end reads: the peer closed it (TCP's
// end of stream), or, over TLS, closed it without close_notify.
bool IsEndOfStream(const boost::beast::error_code& ec);

}  // namespace keel::client

#endif  // KEEL_CMD_KEEL_CLIENT_CLIENT_STREAM_H_
