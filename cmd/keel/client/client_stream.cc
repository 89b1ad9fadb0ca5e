#include "keel/cmd/keel/client/client_stream.h"

#include <openssl/ssl.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/beast/http/error.hpp>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/client/transport.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::client {
namespace {

namespace beast = boost::beast;
namespace net = boost::asio;
namespace ssl = net::ssl;

bool IsIpAddress(const std::string& host) {
  beast::error_code ec;
  net::ip::make_address(host, ec);
  return !ec;
}

}  // namespace

ClientStream::ClientStream(net::io_context& ioc, ClientTls tls)
    : ioc_(ioc), tls_(std::move(tls)), plain_(ioc) {}

beast::tcp_stream& ClientStream::tcp() { return tls_stream_ ? tls_stream_->next_layer() : plain_; }

absl::Status ClientStream::MakeContext() {
  if (context_ != nullptr) return absl::OkStatus();
  auto context = std::make_unique<ssl::context>(ssl::context::tls_client);
  beast::error_code ec;
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                           ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                           ssl::context::no_tlsv1_1,
                       ec);
  if (tls_.ca_file.empty()) {
    context->set_default_verify_paths(ec);
  } else {
    context->load_verify_file(tls_.ca_file, ec);
  }
  if (ec) return InvalidArgument(absl::StrCat("CA file '", tls_.ca_file, "': ", ec.message()));
  if (!tls_.cert_file.empty()) {
    if (context->use_certificate_chain_file(tls_.cert_file, ec); ec) {
      return InvalidArgument(
          absl::StrCat("client certificate '", tls_.cert_file, "': ", ec.message()));
    }
    if (context->use_private_key_file(tls_.key_file, ssl::context::pem, ec); ec) {
      return InvalidArgument(absl::StrCat("client key '", tls_.key_file, "': ", ec.message()));
    }
  }
  context->set_verify_mode(ssl::verify_peer);
  context_ = std::move(context);
  return absl::OkStatus();
}

absl::Status ClientStream::Connect(const std::string& host, uint16_t port, absl::Duration timeout) {
  Close();
  if (!tls_.enabled) return ConnectStream(ioc_, plain_, host, port, timeout);
  KEEL_RETURN_IF_ERROR(MakeContext());
  tls_stream_.emplace(ioc_, *context_);
  const absl::Time deadline = absl::Now() + timeout;
  KEEL_RETURN_IF_ERROR(ConnectStream(ioc_, tls_stream_->next_layer(), host, port, timeout));
  tls_stream_->set_verify_callback(ssl::host_name_verification(host));
  // SNI, for a server (or proxy) holding certificates of several names.
  if (!IsIpAddress(host)) SSL_set_tlsext_host_name(tls_stream_->native_handle(), host.c_str());
  beast::error_code ec;
  tls_stream_->next_layer().expires_after(ToChrono(deadline - absl::Now()));
  tls_stream_->async_handshake(ssl::stream_base::client, [&](beast::error_code e) { ec = e; });
  ioc_.restart();
  ioc_.run();
  if (ec) {
    Close();
    return TransportError("TLS handshake failed with", host, port, ec);
  }
  tls_stream_->next_layer().expires_never();
  return absl::OkStatus();
}

void ClientStream::Close() {
  beast::error_code ignored;
  beast::tcp_stream& stream = tcp();
  stream.socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
  stream.close();
  tls_stream_.reset();
}

bool IsEndOfStream(const beast::error_code& ec) {
  return ec == net::error::eof || ec == beast::http::error::end_of_stream ||
         ec == ssl::error::stream_truncated;
}

}  // namespace keel::client
