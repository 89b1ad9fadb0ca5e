// ServerTls: the daemon's TLS settings (`--tls-cert`, `--tls-key`,
// `--tls-client-ca`) as an OpenSSL context, re-read on demand (SIGHUP).
//
// TLS 1.2 and later only. With a client CA, every connection must present a
// certificate that CA signed (mutual TLS); without one, none is asked for.
// A reload builds a new context from the files and swaps it in: connections
// accepted afterwards use the new certificate, open ones keep theirs. A
// reload that fails (a missing file, a key that does not match its
// certificate) keeps the context in use and says why.
//
// Thread safety: Current and Reload may be called concurrently.
#ifndef KEEL_CMD_KEEL_SERVER_SERVER_TLS_H_
#define KEEL_CMD_KEEL_SERVER_SERVER_TLS_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "keel/core/mutex.h"

namespace boost::asio::ssl {
class context;
}

namespace keel::server {

struct TlsFiles {
  std::string cert;       // PEM certificate chain, the server's first.
  std::string key;        // PEM private key of that certificate.
  std::string client_ca;  // PEM CA bundle for client certificates; "" asks for none.
};

class ServerTls {
 public:
  // kInvalidArgument naming the file and OpenSSL's reason when a file
  // cannot be read or the key does not match the certificate.
  static absl::StatusOr<std::shared_ptr<ServerTls>> Load(TlsFiles files);

  // The context new connections use.
  std::shared_ptr<boost::asio::ssl::context> Current() const;

  // Re-reads the files; on error the current context stays.
  absl::Status Reload();

  const TlsFiles& files() const { return files_; }

 private:
  ServerTls(TlsFiles files, std::shared_ptr<boost::asio::ssl::context> context);

  const TlsFiles files_;
  mutable Mutex mu_;
  std::shared_ptr<boost::asio::ssl::context> context_ ABSL_GUARDED_BY(mu_);
};

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_SERVER_TLS_H_
