#include "keel/cmd/keel/server/server_tls.h"

#include <boost/asio/ssl/context.hpp>
#include <utility>

#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"

namespace keel::server {
namespace {

namespace ssl = boost::asio::ssl;

absl::Status FileError(absl::string_view flag, absl::string_view path,
                       const boost::system::error_code& ec) {
  return InvalidArgument(absl::StrCat(flag, " '", path, "': ", ec.message()));
}

// A server context of `files`, TLS 1.2 and later.
absl::StatusOr<std::shared_ptr<ssl::context>> MakeContext(const TlsFiles& files) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  boost::system::error_code ec;
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                           ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                           ssl::context::no_tlsv1_1 | ssl::context::single_dh_use,
                       ec);
  if (ec) return absl::InternalError(absl::StrCat("TLS options: ", ec.message()));
  if (context->use_certificate_chain_file(files.cert, ec); ec) {
    return FileError("--tls-cert", files.cert, ec);
  }
  if (context->use_private_key_file(files.key, ssl::context::pem, ec); ec) {
    return FileError("--tls-key", files.key, ec);
  }
  // use_private_key_file checks the key against the certificate already
  // loaded; a mismatch fails there with OpenSSL's "key values mismatch".
  if (!files.client_ca.empty()) {
    if (context->load_verify_file(files.client_ca, ec); ec) {
      return FileError("--tls-client-ca", files.client_ca, ec);
    }
    context->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert, ec);
    if (ec) return absl::InternalError(absl::StrCat("TLS verify mode: ", ec.message()));
  }
  return context;
}

}  // namespace

absl::StatusOr<std::shared_ptr<ServerTls>> ServerTls::Load(TlsFiles files) {
  if (files.cert.empty() || files.key.empty()) {
    return InvalidArgument("TLS needs both --tls-cert and --tls-key");
  }
  absl::StatusOr<std::shared_ptr<ssl::context>> context = MakeContext(files);
  if (!context.ok()) return context.status();
  return std::shared_ptr<ServerTls>(new ServerTls(std::move(files), *std::move(context)));
}

ServerTls::ServerTls(TlsFiles files, std::shared_ptr<ssl::context> context)
    : files_(std::move(files)), context_(std::move(context)) {}

std::shared_ptr<ssl::context> ServerTls::Current() const {
  MutexLock lock(&mu_);
  return context_;
}

absl::Status ServerTls::Reload() {
  absl::StatusOr<std::shared_ptr<ssl::context>> context = MakeContext(files_);
  if (!context.ok()) return context.status();
  MutexLock lock(&mu_);
  context_ = *std::move(context);
  return absl::OkStatus();
}

}  // namespace keel::server
